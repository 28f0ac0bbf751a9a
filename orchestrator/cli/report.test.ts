import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { parse } from 'csv-parse/sync';
import { REPO, runCli, tempDir } from '../../test/helpers/cli.js';

const FIXTURE = join(REPO, 'test/fixtures/results/retry-storm-no-retry-x2');
const GOLDEN = join(REPO, 'test/fixtures/golden/retry-storm-no-retry-x2.report.md');

test('metabench report on a results folder copied elsewhere reproduces the same report.md, and every file', async () => {
  const a = join(tempDir('report-a'), 'copy');
  const b = join(tempDir('report-b'), 'elsewhere', 'again');
  cpSync(FIXTURE, a, { recursive: true });
  cpSync(FIXTURE, b, { recursive: true });
  for (const dir of [a, b]) {
    const r = await runCli(['report', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.includes('figure'), false, r.stderr); // no figure warned
  }
  const md = readFileSync(join(a, 'report.md'), 'utf8');
  assert.equal(md, readFileSync(GOLDEN, 'utf8'));
  assert.equal(readFileSync(join(b, 'report.md'), 'utf8'), md);
  // The figures are the same bytes wherever the folder lives.
  const figs = readdirSync(join(a, 'figures'));
  for (const f of figs)
    assert.equal(readFileSync(join(b, 'figures', f), 'utf8'), readFileSync(join(a, 'figures', f), 'utf8'), f);

  // Every figure report.md names exists as well-formed SVG, with its data beside it.
  const named = [...md.matchAll(/\]\(figures\/([^)]+)\.svg\)/g)].map((m) => m[1]!);
  assert.ok(
    named.includes('runs-goodput') && named.includes('run-1-throughput') && named.includes('run-2-latency'),
  );
  for (const id of named) {
    assert.equal(XMLValidator.validate(readFileSync(join(a, 'figures', `${id}.svg`), 'utf8')), true, id);
    assert.ok(
      existsSync(join(a, 'figures', `${id}.csv`)) && existsSync(join(a, 'figures', `${id}.vl.json`)),
      id,
    );
  }

  // CSV and JSON of every series and summary.
  const runs = parse(readFileSync(join(a, 'data/runs.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(runs.length, 2);
  const s1 = JSON.parse(readFileSync(join(FIXTURE, 'run-1/summary.json'), 'utf8')) as {
    offered: number;
    baseline: { goodputPerS: number };
  };
  assert.equal(Number(runs[0]!['offered']), s1.offered);
  assert.equal(Number(runs[0]!['baseline.goodputPerS']), s1.baseline.goodputPerS);
  const ts = parse(readFileSync(join(a, 'data/timeseries.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  const rows1 = readFileSync(join(FIXTURE, 'run-1/timeseries.csv'), 'utf8').trim().split('\n').length - 1;
  const rows2 = readFileSync(join(FIXTURE, 'run-2/timeseries.csv'), 'utf8').trim().split('\n').length - 1;
  assert.equal(ts.length, rows1 + rows2);
  assert.deepEqual([...new Set(ts.map((r) => r['run']))], ['1', '2']);
  const tj = JSON.parse(readFileSync(join(a, 'data/timeseries.json'), 'utf8')) as {
    run: number;
    series: Record<string, unknown[]>;
  }[];
  assert.equal(tj[1]!.series['goodput']!.length, rows2);
  assert.ok(existsSync(join(a, 'data/aggregate.csv')));

  // report.html: one file, the same sections, no reference to anything outside it.
  const html = readFileSync(join(a, 'report.html'), 'utf8');
  for (const h of [...md.matchAll(/^##? (.+)$/gm)].map((m) => m[1]!)) assert.ok(html.includes(`>${h}</h`), h);
  assert.doesNotMatch(
    html,
    /<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org|vega\.github\.io)[^"'\s]+\.(js|css)/,
  );
});

test('metabench report on a folder without runs fails with a usage error, not a stack trace', async () => {
  const r = await runCli(['report', tempDir('report-empty')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /holds no finished run/);
  assert.doesNotMatch(r.stderr, /at .*\.js:\d+/);
});

test('metabench compare writes a side-by-side report of two folders', async () => {
  const root = tempDir('compare');
  const a = join(root, 'a');
  const b = join(root, 'b');
  cpSync(FIXTURE, a, { recursive: true });
  cpSync(FIXTURE, b, { recursive: true });
  const out = join(root, 'cmp');
  const r = await runCli(['compare', a, b, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const md = readFileSync(join(out, 'compare.md'), 'utf8');
  assert.match(md, /\| \| A \| B \|/);
  assert.match(md, /\| folder \| a \| b \|/);
  assert.match(md, /\| baseline p99 \| .*\(n=\d+\).* \| .*\(n=\d+\).* \|/);
  assert.ok(md.indexOf('## Verdicts') > md.indexOf('## After the trigger'));
  for (const id of ['compare-goodput', 'compare-amplification', 'compare-latency-p99']) {
    const svg = readFileSync(join(out, 'figures', `${id}.svg`), 'utf8');
    assert.equal(XMLValidator.validate(svg), true, id);
    assert.ok(svg.includes('A: a') && svg.includes('B: b'), id);
  }
  assert.ok(existsSync(join(out, 'compare.html')));
});

test('metabench compare names each side by the fields its setup differs in, in every legend', async () => {
  const out = join(tempDir('compare-differs'), 'cmp');
  const r = await runCli([
    'compare',
    join(REPO, 'test/fixtures/results/retry-storm-x1'),
    join(REPO, 'test/fixtures/results/retry-storm-no-retry-x2'),
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const md = readFileSync(join(out, 'compare.md'), 'utf8');
  assert.match(md, /\| folder \| retry-storm-x1 \| retry-storm-no-retry-x2 \|/);
  assert.match(
    md,
    /\| differs in \| client\.retry\.policy=immediate, client\.retry\.maxAttempts=4 \| client\.retry\.policy=none, client\.retry\.maxAttempts=1 \|/,
  );
  for (const id of ['compare-goodput', 'compare-amplification', 'compare-latency-p99']) {
    const svg = readFileSync(join(out, 'figures', `${id}.svg`), 'utf8');
    assert.ok(svg.includes('A: client.retry.policy=immediate, client.retry.maxAttempts=4'), id);
    assert.ok(svg.includes('B: client.retry.policy=none, client.retry.maxAttempts=1'), id);
    assert.doesNotMatch(svg, /A: retry-storm-x1/, id);
  }
});
