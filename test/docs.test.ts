import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { buildProgram } from '../orchestrator/cli/program.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import ts from 'typescript';
import { stringify } from 'yaml';
import { parseYamlFile } from '../foundation/yamlFile.js';
import { formatIssue, SpecError } from '../foundation/errors.js';
import { validateExperiment } from '../orchestrator/spec/load.js';
import { isSweepData, loadSweep } from '../orchestrator/spec/sweep.js';
import { firstHour, userFolder } from '../benchmarks/firstHourDocs.js';
import { tempDir } from './helpers/cli.js';

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

// Issue 33: the guide's sweep snippet put a comment above the schema line, and a reader who
// saved it broke jsonSchema.test. Every snippet of the documentation is now checked: YAML
// through the real loader, command lines through the CLI's own parser.

/** Every fenced block of the documentation: its file, first line, language and text. */
function fencedBlocks(): { doc: string; line: number; lang: string; text: string }[] {
  const out: { doc: string; line: number; lang: string; text: string }[] = [];
  for (const doc of docs) {
    const lines = readFileSync(join(REPO, doc), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^\s*```(\w*)/.exec(lines[i] ?? '');
      if (!open) continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
      out.push({ doc, line: start + 2, lang: open[1] ?? '', text: body.join('\n') });
    }
  }
  return out;
}

/** `over` laid over `base`: mappings merged key by key, anything else replaced. */
function overlay(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return over;
  if (typeof over !== 'object' || over === null || Array.isArray(over)) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  const o = over as Record<string, unknown>;
  // A fragment's `triggers` replaces a base's single `trigger`, and the other way round.
  if ('triggers' in o) delete out.trigger;
  if ('trigger' in o) delete out.triggers;
  for (const [k, v] of Object.entries(o)) out[k] = overlay(out[k], v);
  return out;
}

test('every YAML snippet of the docs loads: a sweep or experiment as a file, a fragment inside some catalogue experiment; a schema line is the first', () => {
  const catalogue = readdirSync(join(REPO, 'experiments'))
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'))
    .map((f) => parseYamlFile(readFileSync(join(REPO, 'experiments', f), 'utf8'), f).data);
  const problems: string[] = [];
  let checked = 0;
  // The catalogue's folder as a user has it after the guide: with the files it asks to save
  // (a sweep of the guide names an experiment the guide saved).
  const folder = join(userFolder(REPO, tempDir('docs-snippets'), firstHour(REPO).saves), 'experiments');
  for (const b of fencedBlocks().filter((x) => x.lang === 'yaml' || x.lang === 'yml')) {
    const where = `${b.doc}:${b.line}`;
    if (b.text.split('\n').every((l) => /^\s*(#.*)?$/.test(l))) continue; // comments alone: an illustration
    checked++;
    const schemaLine = b.text.split('\n').findIndex((l) => l.includes('yaml-language-server: $schema='));
    if (schemaLine > 0) problems.push(`${where}: the schema line is line ${schemaLine + 1}, not the first`);
    // Read as a file of the catalogue's folder: a sweep's `experiment:` resolves there.
    const file = join(folder, `snippet-${b.line}.yaml`);
    try {
      const y = parseYamlFile(b.text, file);
      if (isSweepData(y.data)) loadSweep(y);
      else if (
        ['name', 'load', 'client', 'schedule'].every((k) => k in y.data) &&
        ('lab' in y.data || 'system' in y.data)
      )
        validateExperiment(y, [], () => {});
      else {
        // A fragment is checked inside each catalogue experiment until one takes it. What it
        // names that is declared elsewhere in a file (a request or cost class, the other
        // shares of a mix) is not held against it.
        const elsewhere = /no request class|no cost class|the shares must sum/;
        let first: unknown;
        const fits = catalogue.some((base) => {
          try {
            validateExperiment(parseYamlFile(stringify(overlay(base, y.data)), file), [], () => {});
            return true;
          } catch (err) {
            if (err instanceof SpecError && err.issues.every((i) => elsewhere.test(i.message))) return true;
            first ??= err;
            return false;
          }
        });
        if (!fits) throw first;
      }
    } catch (err) {
      problems.push(
        `${where}: ${err instanceof SpecError ? err.issues.map(formatIssue).join('; ') : String(err)}`,
      );
    }
  }
  assert.ok(checked >= 8, `only ${checked} YAML snippets found`);
  assert.deepEqual(problems, []);
});

/** A command line's words, with shell quoting and comments removed. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(#.*$)|(\S+)/g)) {
    if (m[3] !== undefined) break;
    out.push(m[1] ?? m[2] ?? m[4] ?? '');
  }
  return out;
}

test('every metabench command line of the docs names a command and options it has; a concrete one parses', async () => {
  registerRuntimes();
  const program = await buildProgram();
  program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
  const problems: string[] = [];
  let checked = 0;
  for (const b of fencedBlocks()) {
    // A command may continue on the next lines (a synopsis's `  [--opt X]`, a shell's `\`).
    const lines: string[] = [];
    for (const l of b.text.split('\n'))
      if (lines.length > 0 && (/^\s+[[-]/.test(l) || lines[lines.length - 1]!.endsWith('\\')))
        lines[lines.length - 1] = `${lines[lines.length - 1]!.replace(/\\$/, '')} ${l.trim()}`;
      else lines.push(l);
    for (const line of lines) {
      const w = words(line.replace(/^\s*\$\s+/, ''));
      const at = w[0] === 'npx' ? 1 : 0;
      if (w[at] !== 'metabench') continue;
      const where = `${b.doc}:${b.line}: ${line.trim()}`;
      checked++;
      let cmd: Command = program;
      let i = at + 1;
      for (; i < w.length; i++) {
        const name = (w[i] ?? '').split('|')[0];
        const sub = cmd.commands.find((c) => c.name() === name);
        if (!sub) break;
        cmd = sub;
      }
      if (cmd === program) {
        problems.push(`${where}: no such command`);
        continue;
      }
      const rest = w.slice(i);
      const has = (flag: string) =>
        flag === '--help' ||
        cmd.options.some((o) => o.long === flag || o.short === flag || o.long === `-${flag}`);
      if (rest.some((x) => /[[<|]|\.\.\./.test(x))) {
        // A synopsis: every option it shows exists.
        for (const x of rest.join(' ').matchAll(/(?<![\w-])(--?[a-z][\w-]*)/g))
          if (!has(x[1]!)) problems.push(`${where}: ${x[1]} is no option of ${cmd.name()}`);
        continue;
      }
      try {
        const { unknown } = cmd.parseOptions(rest);
        if (unknown.length) problems.push(`${where}: unknown ${unknown.join(' ')}`);
      } catch (err) {
        problems.push(`${where}: ${(err as Error).message}`);
      }
    }
  }
  assert.ok(checked >= 40, `only ${checked} command lines found`);
  assert.deepEqual(problems, []);
});

test('no text a user reads cites DESIGN.md, a file the repository does not have: the docs, and the string literals of the code that writes reports', () => {
  const cited: string[] = [];
  for (const doc of docs) if (readFileSync(join(REPO, doc), 'utf8').includes('DESIGN.md')) cited.push(doc);
  const walk = (dir: string): string[] =>
    readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((d) =>
      d.isDirectory()
        ? walk(join(dir, d.name))
        : d.name.endsWith('.ts') && !d.name.endsWith('.test.ts')
          ? [join(dir, d.name)]
          : [],
    );
  for (const file of ['foundation', 'bench', 'orchestrator', 'sim', 'benchmarks', 'services'].flatMap(walk)) {
    const text = readFileSync(join(REPO, file), 'utf8');
    if (!text.includes('DESIGN.md')) continue;
    // Comments may cite the design brief; strings (what is printed or written) may not.
    const visit = (node: ts.Node): void => {
      if (
        (ts.isStringLiteral(node) ||
          ts.isNoSubstitutionTemplateLiteral(node) ||
          ts.isTemplateLiteralToken(node)) &&
        node.text.includes('DESIGN.md')
      )
        cited.push(`${file}: ${node.text.slice(0, 80)}`);
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  }
  assert.deepEqual(cited, []);
});
