import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { REPO, runCli, tempDir } from '../helpers/cli.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * report.html in a real browser (Debian's chromium, headless): every chart draws, the
 * console stays clean, nothing is fetched from outside the file, and a screenshot has
 * content. CI installs chromium (.ci/run); without it this test fails, it never skips.
 */
test('report.html opens in headless Chromium with every chart drawn and no console error', async () => {
  assert.ok(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`,
  );
  const dir = join(tempDir('html'), 'results');
  cpSync(join(REPO, 'test/fixtures/results/retry-storm-no-retry-x2'), dir, { recursive: true });
  const r = await runCli(['report', dir]);
  assert.equal(r.code, 0, r.stderr);

  // A fresh profile (--user-data-dir) each time: playwright takes it as launchPersistentContext's directory.
  const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'metabench-chromium-')), {
    executablePath: CHROMIUM,
    viewport: { width: 1400, height: 1400 },
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (req) => requests.push(req.url()));
    const url = pathToFileURL(join(dir, 'report.html')).href;
    await page.goto(url);
    await page.waitForSelector('body[data-charts="ready"]', { timeout: 30_000 });

    const charts = await page.$$eval('.chart', (els) =>
      els.map((el) => ({
        id: el.id,
        svg: el.querySelector('svg') !== null,
        error: el.className.includes('chart-error'),
      })),
    );
    const md = readFileSync(join(dir, 'report.md'), 'utf8');
    assert.equal(
      charts.length,
      (md.match(/\]\(figures\//g) ?? []).length,
      'one chart per figure of report.md',
    );
    for (const c of charts) assert.ok(c.svg && !c.error, `${c.id} not drawn`);
    // Full width in a 1400 px window: each chart's drawing fills its box (at least 85% of it,
    // never wider), and the box is the page's width, not the print size (about 460 px).
    const widths = await page.$$eval('.chart', (els) =>
      els.map((el) => ({
        id: el.id,
        box: el.getBoundingClientRect().width,
        svg: el.querySelector('svg')!.getBoundingClientRect().width,
      })),
    );
    for (const w of widths) {
      assert.ok(w.box > 1200, `${w.id}: a box ${w.box} px wide in a 1400 px window`);
      assert.ok(
        w.svg >= 0.85 * w.box && w.svg <= w.box + 1,
        `${w.id}: ${w.svg} px drawn in a ${w.box} px box`,
      );
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, [url], 'report.html fetched something besides itself');

    const headings = await page.$$eval('h1, h2', (els) => els.map((e) => e.textContent));
    assert.deepEqual(
      headings,
      [...md.matchAll(/^##? (.+)$/gm)].map((m) => m[1]),
    );

    // The screenshot has content: a fair share of non-white pixels, several colours of the palette.
    const shot = join(dir, 'report.png');
    await page.screenshot({ path: shot, fullPage: false });
    const png = PNG.sync.read(readFileSync(shot));
    let ink = 0;
    const colours = new Set<string>();
    for (let i = 0; i < png.data.length; i += 4) {
      const [rr, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
      if (rr < 240 || g < 240 || b < 240) ink++;
      colours.add(`${rr >> 4},${g >> 4},${b >> 4}`);
    }
    const share = ink / (png.width * png.height);
    assert.ok(share > 0.02, `screenshot nearly blank (${(share * 100).toFixed(2)}% ink)`);
    assert.ok(colours.size > 20, `screenshot has only ${colours.size} colours`);

    // Interactive: hovering a line of the first chart shows a tooltip with its exact values.
    // The pixels on a line are found in the page (a line is 1–2 px thin), then hovered in turn.
    const first = page.locator('.chart svg').first();
    await first.scrollIntoViewIfNeeded();
    const box = (await first.boundingBox())!;
    const onLines = await page.evaluate(
      `(() => {
        const out = [];
        for (let x = ${box.x + box.width * 0.15}; x < ${box.x + box.width * 0.85} && out.length < 200; x += 3)
          for (let y = ${box.y}; y < ${box.y + box.height}; y += 1) {
            const e = document.elementFromPoint(x, y);
            if (e && e.getAttribute('aria-roledescription') === 'line mark') out.push([x, y]);
          }
        return out;
      })()`,
    );
    let tip: string | null = null;
    for (const [x, y] of onLines as [number, number][]) {
      await page.mouse.move(x - 3, y);
      await page.mouse.move(x, y);
      tip = await page.$eval('#vg-tooltip-element', (el) =>
        el.classList.contains('visible') ? el.textContent : null,
      );
      if (tip !== null) break;
    }
    assert.ok(
      tip !== null,
      `no tooltip on the first chart (${(onLines as unknown[]).length} points on its lines hovered)`,
    );
    assert.match(tip, /time \(s\)\s*\d/, `the tooltip: ${tip}`);
  } finally {
    await browser.close();
  }
});
