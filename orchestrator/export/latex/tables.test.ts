import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunSummary, WindowSummary } from '../../analysis/summary.js';
import { experimentTables } from './tables.js';

// Every number a table prints is the summary.json value it comes from, to three significant
// figures: parsed back from the LaTeX, not compared with the same formatting code.

function window(seed: number, samples: number): WindowSummary {
  return {
    seconds: 60,
    offeredPerS: 281.5 * seed,
    goodputPerS: 1140.349 * seed,
    amplification: 3.9749,
    amplificationServer: seed === 2 ? null : 4.065,
    latencyMs: { samples, mean: 20.93, p50: 0.0153049, p90: 48.2249 * seed, p99: 12345.6, max: 156.924 },
  };
}

function summary(run: number): RunSummary {
  return {
    run,
    outcome: run === 1 ? 'metastable' : 'recovered',
    validity: { valid: run === 1, checks: [], failed: [] },
    baseline: window(run, 1686 * run),
    afterTrigger: window(run + 0.37, run === 2 ? 0 : 99_999),
    trigger: { kind: 'pause', target: 'api', startS: 90.004, endS: 100.0049 },
    recoveryTimeS: run === 1 ? null : 12.3456,
    recoveryDeadlineS: 50,
  } as unknown as RunSummary;
}

/** The rows of a booktabs table: its cells, between \midrule and \bottomrule. */
function rows(tex: string): string[][] {
  const body = tex.slice(tex.indexOf('\\midrule') + 8, tex.indexOf('\\bottomrule'));
  return body
    .split('\\\\')
    .map((r) => r.trim())
    .filter((r) => r !== '')
    .map((r) => r.split('&').map((c) => c.trim()));
}

/** A cell's number: \num{…} parsed, or null for "--" (unmeasured). */
function parse(cell: string): number | null {
  if (cell === '--') return null;
  const m = /^\\num\{(-?[\d.]+(?:e-?\d+)?)\}$/.exec(cell);
  assert.ok(m, `not a \\num cell: ${cell}`);
  return Number(m[1]);
}

function assertSig3(cell: string, value: number | null, what: string): void {
  const got = parse(cell);
  if (value === null) return assert.equal(got, null, `${what}: ${cell} for an unmeasured value`);
  assert.notEqual(got, null, `${what}: -- for ${value}`);
  const half = 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(value))) - 2);
  assert.ok(Math.abs(got! - value) <= half * (1 + 1e-9), `${what}: ${cell} is not ${value} to 3 figures`);
  // Three figures, no more and no fewer (digits after a leading zero run).
  const digits = /^\\num\{([\d.]+)\}$/.exec(cell)![1]!.replace('.', '').replace(/^0+/, '');
  assert.equal(digits.length >= 3 || Number.isInteger(value), true, `${what}: ${cell} has under 3 figures`);
}

test('every number in the tables parses back to its summary.json value to three significant figures', () => {
  const runs = [1, 2].map((i) => ({ index: i, summary: summary(i) }));
  const tables = new Map(experimentTables('retry-storm', runs).map((t) => [t.id, t.tex]));
  assert.deepEqual([...tables.keys()], ['baseline', 'after-trigger', 'outcome']);
  for (const id of ['baseline', 'after-trigger'] as const) {
    const r = rows(tables.get(id)!);
    assert.equal(r.length, 2, `${id}: one row per run`);
    r.forEach((cells, i) => {
      const w = id === 'baseline' ? runs[i]!.summary.baseline : runs[i]!.summary.afterTrigger;
      assert.equal(cells[0], String(i + 1));
      const measured = [
        w.offeredPerS,
        w.goodputPerS,
        w.amplification,
        w.amplificationServer,
        w.latencyMs.p50,
        w.latencyMs.p90,
        w.latencyMs.p99,
      ];
      measured.forEach((v, k) => assertSig3(cells[k + 1]!, v, `${id} run ${i + 1} column ${k + 2}`));
      // The sample count beside the percentiles, exact.
      assert.equal(cells[8], `\\num{${w.latencyMs.samples}}`);
    });
  }
  const outcome = rows(tables.get('outcome')!);
  outcome.forEach((cells, i) => {
    const s = runs[i]!.summary;
    assert.deepEqual(cells.slice(0, 3), [String(i + 1), s.validity.valid ? 'yes' : 'no', s.outcome]);
    // Seconds, one precision down the table ("90.0 / 100.0", never "90.0 / 100").
    [s.trigger.startS, s.trigger.endS, s.recoveryTimeS, s.recoveryDeadlineS].forEach((v, k) => {
      const cell = cells[k + 3]!;
      if (v === null) return assert.equal(cell, '--');
      assert.equal(cell, `\\num{${v.toFixed(1)}}`, `outcome run ${i + 1} column ${k + 4}`);
    });
  });
  assert.deepEqual(outcome[0]!.slice(3, 5), ['\\num{90.0}', '\\num{100.0}']);
});

test('the outcome table prints its seconds with one precision, more decimals only for a scaled-down run', () => {
  const at = (startS: number, endS: number, deadline: number) => {
    const s = {
      ...summary(2),
      trigger: { kind: 'pause', target: 'api', startS, endS },
      recoveryDeadlineS: deadline,
    };
    const t = experimentTables('x', [{ index: 1, summary: s as RunSummary }]).find(
      (x) => x.id === 'outcome',
    )!;
    return rows(t.tex)[0]!.slice(3);
  };
  assert.deepEqual(at(9, 10, 5), ['\\num{9.0}', '\\num{10.0}', '\\num{12.3}', '\\num{5.0}']);
  assert.deepEqual(at(0.9, 1.2, 0.5), ['\\num{0.90}', '\\num{1.20}', '\\num{12.35}', '\\num{0.50}']);
});

test('each table is booktabs with a label and siunitx units in its header, and no thousands comma siunitx would misread', () => {
  const tables = experimentTables('retry_storm', [{ index: 1, summary: summary(1) }]);
  for (const t of tables) {
    assert.match(t.tex, /\\toprule[\s\S]*\\midrule[\s\S]*\\bottomrule/);
    assert.ok(t.tex.includes(`\\label{tab:${t.id}}`));
    assert.ok(t.tex.includes('retry\\_storm'), 'the name is escaped');
    assert.doesNotMatch(t.tex, /\\num\{[^}]*,/);
  }
  assert.match(tables[0]!.tex, /\(\\si\{\\per\\second\}\)/);
  assert.match(tables[0]!.tex, /\\num\{12300\}/);
});
