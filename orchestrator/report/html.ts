import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { marked } from 'marked';
import type { Section } from './markdown.js';
import { FONT } from './theme.js';

/** The browser builds of vega, vega-lite and vega-embed, read from the installed packages (never a CDN). */
function libraryScripts(): string[] {
  const build = (pkg: string, file: string) =>
    readFileSync(join(dirname(fileURLToPath(import.meta.resolve(pkg))), file), 'utf8');
  return [
    build('vega', 'vega.min.js'),
    build('vega-lite', 'vega-lite.min.js'),
    build('vega-embed', 'vega-embed.min.js'),
  ];
}

/** What a figure needs beside its plot on screen: the y axis, its title and the padding (px). */
const AXES_PX = 110;

/** Text that goes inside a <script> element: it must not close the element early. */
function scriptSafe(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * report.html: one self-contained file (no network: the libraries, the data and the
 * styles are inline, and a Content-Security-Policy forbids any fetch), with the same
 * sections as report.md and each figure as an interactive chart as wide as the page
 * (tooltips with the exact values; drag to pan, scroll to zoom on time series).
 */
export function renderHtml(title: string, sections: readonly Section[]): string {
  const specs: Record<string, unknown> = {};
  const body: string[] = [];
  sections.forEach((s, i) => {
    body.push(
      `<section id="${escapeHtml(s.id)}">`,
      `<h${i === 0 ? 1 : 2}>${escapeHtml(s.title)}</h${i === 0 ? 1 : 2}>`,
    );
    body.push(marked.parse(s.body, { async: false, gfm: true }));
    for (const f of s.figures) {
      specs[f.id] = f.spec;
      body.push(
        `<figure><div class="chart" id="fig-${escapeHtml(f.id)}" data-figure="${escapeHtml(f.id)}"></div>`,
        `<figcaption><a href="figures/${escapeHtml(f.id)}.svg">${escapeHtml(f.title)}</a>: ${escapeHtml(f.caption)}</figcaption></figure>`,
      );
    }
    body.push('</section>');
  });
  const specsJson = JSON.stringify(specs).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: ${FONT}; max-width: 110rem; margin: 2rem auto; padding: 0 1.5rem; color: #111; line-height: 1.45; }
p, ul, ol, blockquote, figcaption { max-width: 60rem; }
h1 { font-size: 1.7rem; } h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.88rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
blockquote { border-left: 4px solid #D55E00; background: #fff4ec; margin: 0.5rem 0; padding: 0.3rem 0.8rem; }
code { background: #f2f2f2; padding: 0 0.2rem; }
figure { margin: 1.2rem 0; } figcaption { font-size: 0.88rem; color: #333; }
.chart { width: 100%; }
.chart-error { color: #b00; }
</style>
</head>
<body>
${body.join('\n')}
<script type="application/json" id="figure-specs">${specsJson}</script>
${libraryScripts()
  .map((js) => `<script>${scriptSafe(js)}</script>`)
  .join('\n')}
<script>
(function () {
  var specs = JSON.parse(document.getElementById('figure-specs').textContent);
  var charts = document.querySelectorAll('.chart');
  var pending = [];
  charts.forEach(function (el) {
    // The print size (theme.ts) is for a thesis column; on screen each figure takes the
    // page's width: its plot is drawn as wide as the figure's box less the axes and padding.
    var spec = JSON.parse(JSON.stringify(specs[el.getAttribute('data-figure')]));
    var w = Math.max(320, el.clientWidth - ${AXES_PX});
    var config = spec.config || {};
    config.view = Object.assign({}, config.view, { continuousWidth: w, continuousHeight: Math.min(420, Math.max(170, Math.round(w * 0.3))) });
    spec.config = config;
    pending.push(vegaEmbed(el, spec, { renderer: 'svg', actions: false, tooltip: true }).catch(function (err) {
      el.className = 'chart chart-error';
      el.textContent = 'this chart could not be drawn: ' + err;
      console.error(err);
    }));
  });
  Promise.all(pending).then(function () { document.body.setAttribute('data-charts', 'ready'); });
})();
</script>
</body>
</html>
`;
}
