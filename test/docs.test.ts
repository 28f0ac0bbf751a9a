import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { buildProgram } from '../orchestrator/cli/program.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';

// The README is a first screen and an index; the rest lives in docs/. Text moves, so its
// links must follow: every relative link of the documentation reaches a file, and every
// #anchor a heading there. docs/commands.md promises every option of every command.
const REPO = fileURLToPath(new URL('../../', import.meta.url));

const docs = [
  'README.md',
  'experiments/README.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The lines of a markdown file outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchors of a file's headings (lower case, punctuation dropped, spaces to hyphens, repeats numbered). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = (m[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

test('the anchors of headings are GitHub’s', () => {
  const a = anchors(
    '# The lab\n## `lab`: the system under test\n```\n# not a heading\n```\n## lab up, down, status\n## The lab\n',
  );
  assert.deepEqual([...a], ['the-lab', 'lab-the-system-under-test', 'lab-up-down-status', 'the-lab-1']);
});

test('every relative link in README.md, docs/ and experiments/README.md reaches a file and its anchor', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const doc of docs) {
    const text = readFileSync(join(REPO, doc), 'utf8');
    for (const line of prose(text))
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? '';
        if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? join(REPO, doc) : join(REPO, dirname(doc), path);
        checked++;
        if (!existsSync(file)) {
          broken.push(`${doc}: ${target} (no file ${relative(REPO, file)})`);
          continue;
        }
        if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${doc}: ${target} (no heading #${anchor} in ${relative(REPO, file)})`);
      }
  }
  assert.ok(checked > 40, `only ${checked} links found: is the link pattern still right?`);
  assert.deepEqual(broken, []);
});

test('the README’s first screen: install, the simulated run, the lab run, the report, the tests, the index', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const lines = readme.split('\n');
  const at = (s: string) => lines.findIndex((l) => l.includes(s));
  const order = [
    'npm install',
    'npx metabench run experiments/retry-storm.yaml --runtime sim',
    'npx metabench run experiments/retry-storm.yaml --scale 0.34',
    'report.md',
    'npm test',
    'npm run test:unit',
    '## Documentation',
  ].map(at);
  for (const i of order) assert.ok(i >= 0, 'a first-screen item is missing');
  assert.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
    'in this order',
  );
  const report = order[3] ?? -1;
  assert.ok(report < 70, `the report is explained by line 70 (line ${report + 1})`);
  for (const doc of ['commands', 'client-model', 'load-model'])
    assert.match(readme, new RegExp(`\\]\\(docs/${doc}\\.md\\)`), `README links docs/${doc}.md`);
});

test('docs/commands.md names every command, and every option in that command’s section', async () => {
  const doc = readFileSync(join(REPO, 'docs/commands.md'), 'utf8');
  const sections = new Map<string, string>();
  for (const part of doc.split(/^## /m).slice(1)) {
    const nl = part.indexOf('\n');
    sections.set(part.slice(0, nl).trim(), part.slice(nl));
  }
  // `lab up`, `lab down` and `lab status` share a section; every other command has its own,
  // named as it is typed.
  const sectionOf = (name: string) => (/^lab (up|down|status)$/.test(name) ? 'lab up, down, status' : name);
  registerRuntimes();
  const missing: string[] = [];
  let commands = 0;
  const walk = (cmd: Command, prefix: string) => {
    for (const sub of cmd.commands) {
      const name = `${prefix}${sub.name()}`;
      if (sub.commands.length > 0) {
        walk(sub, `${name} `);
        continue;
      }
      commands++;
      const text = sections.get(sectionOf(name));
      if (text === undefined) {
        missing.push(`metabench ${name} (no "## ${sectionOf(name)}")`);
        continue;
      }
      for (const opt of sub.options) {
        const flag = opt.long;
        if (flag === undefined || flag === '--help') continue;
        if (!new RegExp(`${flag}(?![\\w-])`).test(text)) missing.push(`metabench ${name} ${flag}`);
      }
    }
  };
  walk(await buildProgram(), '');
  assert.ok(commands >= 18, `only ${commands} commands found`);
  assert.deepEqual(missing, [], 'commands and options the CLI has that docs/commands.md does not name');
});
