import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/cli.js';
import { isSweepTable, type SweepTable } from '../../orchestrator/report/tables.js';
import { sig3 } from '../../orchestrator/report/numbers.js';

// Issue 22's acceptance: a factorial sweep of two mechanisms in simulation (retries × the
// attempt timeout, 2×2, two runs per point, --scale 0.1: seconds of virtual time each)
// produces the interaction plot (spec, SVG and PDF) and the effects table in the sweep's
// report. No lab runs: --runtime sim (the fixture's), so no lab lock.

type Spec = Record<string, unknown>;
const layers = (s: Spec): Spec[] => (s['layer'] as Spec[] | undefined) ?? [];
const typeOf = (l: Spec): string => String((l['mark'] as Spec)['type'] ?? l['mark']);
const enc = (l: Spec, ch: string): Spec => ((l['encoding'] as Record<string, Spec>)[ch] ?? {}) as Spec;

test('a 2×2 factorial sweep in simulation writes the interaction plot and the effects table', async () => {
  const out = join(tempDir('sweep-factorial'), 'out');
  const r = await runCli([
    'sweep',
    '--any-scale',
    'test/fixtures/sweeps/retries-x-timeout.sweep.yaml',
    '--runtime',
    'sim',
    '--scale',
    '0.1',
    '--events',
    'none',
    '--out',
    out,
    '--quiet',
  ]);
  assert.equal(r.code, 0, r.stderr);

  const table = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as SweepTable;
  assert.ok(isSweepTable(table));
  assert.equal(table.name, 'retries-x-timeout');
  assert.equal(table.design, 'grid');
  assert.equal(table.rows.length, 4);
  for (const row of table.rows)
    assert.equal(row.perRun?.['goodput after']?.length, 2, 'two valid runs a point');

  // The interaction plot: x = retries (numeric), one line per timeout, y = goodput after with CIs.
  const stem = join(out, 'figures', 'sweep-interaction-goodput-after');
  for (const ext of ['svg', 'pdf', 'csv', 'vl.json']) assert.ok(existsSync(`${stem}.${ext}`), ext);
  assert.equal(readFileSync(`${stem}.pdf`).subarray(0, 5).toString(), '%PDF-');
  const spec = JSON.parse(readFileSync(`${stem}.vl.json`, 'utf8')) as Spec;
  const line = layers(spec).find((l) => typeOf(l) === 'line')!;
  assert.equal(enc(line, 'x')['type'], 'quantitative');
  assert.equal(enc(line, 'x')['title'], 'client.retry.maxAttempts (value)');
  assert.equal(enc(line, 'color')['field'], 'group');
  const bars = layers(spec).find((l) => typeOf(l) === 'errorbar');
  assert.ok(bars, 'error bars');
  const points = (spec['data'] as { values: Spec[] }).values;
  assert.deepEqual(points.map((p) => [p['x'], p['group']]).sort(), [
    [1, 'client.timeout 2s'],
    [1, 'client.timeout 500ms'],
    [4, 'client.timeout 2s'],
    [4, 'client.timeout 500ms'],
  ]);
  const svg = readFileSync(`${stem}.svg`, 'utf8');
  assert.match(svg, /client\.timeout 500ms/);
  assert.ok(existsSync(join(out, 'figures', 'sweep-main-goodput-after.svg')));
  assert.ok(existsSync(join(out, 'figures', 'sweep-map.svg')));

  // The effects table, its values recomputed here from the cell means (a balanced 2×2:
  // a main effect is the mean at the high level − the mean at the low one; the interaction
  // is half the difference between retries' effect at 2 s and at 500 ms).
  const cell = (a: number, b: string): number => {
    const ys = table.rows
      .find((x) => x.factors['client.retry.maxAttempts'] === a && x.factors['client.timeout'] === b)!
      .perRun!['goodput after']!.map((y) => y!);
    return (ys[0]! + ys[1]!) / 2;
  };
  const [ll, lh, hl, hh] = [cell(1, '500ms'), cell(1, '2s'), cell(4, '500ms'), cell(4, '2s')];
  const retries = (hl + hh) / 2 - (ll + lh) / 2;
  const timeout = (lh + hh) / 2 - (ll + hl) / 2;
  const both = (hh - lh - (hl - ll)) / 2;
  // Retries collapse the api only with the short timeout: the storm is an interaction.
  assert.ok(retries < 0 && timeout > 0 && both > 0, `${retries} ${timeout} ${both}`);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /^# Sweep retries-x-timeout\n/);
  const effects = md.slice(md.indexOf('### Factorial effects'));
  assert.ok(effects.length < md.length, 'an effects section');
  const row = (term: string, v: number): RegExp =>
    new RegExp(
      `\\| goodput after \\(req/s\\) \\| ${term.replace(/\./g, '\\.')} \\| ${(v > 0 ? '\\+' : '') + sig3(v)} \\| [^|]+ \\| \\[[^\\]]+\\] \\| 8 \\|`,
    );
  assert.match(effects, row('client.retry.maxAttempts', retries));
  assert.match(effects, row('client.timeout', timeout));
  assert.match(effects, row('client.retry.maxAttempts × client.timeout', both));
  // The table sorted by level: retries 1 before 4, 500 ms before 2 s.
  const order = md
    .split('\n')
    .filter((l) => /^\| [14] \| (500ms|2s) \|/.test(l))
    .map((l) => l.split(' | ').slice(0, 2).join(' '));
  assert.deepEqual(order, ['| 1 500ms', '| 1 2s', '| 4 500ms', '| 4 2s']);
});
