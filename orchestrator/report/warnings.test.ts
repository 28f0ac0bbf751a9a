import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summary } from '../../test/helpers/reportData.js';
import type { RunSummary } from '../analysis/summary.js';
import { runWarnings } from './warnings.js';

test('a clean run has no warning', () => {
  assert.deepEqual(runWarnings(summary()), []);
});

test('offered ≠ recorded, late sends above 0.1%, omission factor above 2 each warn, from the figures alone', () => {
  assert.match(
    runWarnings(summary({ offered: 1000, recorded: 990, lateSends: 0 })).join(),
    /offered \(1000\) != recorded \(990\)/,
  );
  assert.deepEqual(runWarnings(summary({ offered: 1000, recorded: 1000, lateSends: 1 })), []); // 0.1% is the limit, not above it
  assert.match(
    runWarnings(summary({ offered: 1000, recorded: 1000, lateSends: 2 })).join(),
    /2 late sends \(0\.2% of origins/,
  );
  assert.deepEqual(runWarnings(summary({ omissionFactor: 2 })), []);
  assert.match(runWarnings(summary({ omissionFactor: 2.5 })).join(), /omission factor 2\.5 > 2/);
});

test("the client's connection cap turning the open loop closed warns when the summary reports waits", () => {
  const withWait = (x: Record<string, unknown>) => ({ ...summary(), ...x }) as unknown as RunSummary;
  assert.match(
    runWarnings(withWait({ clientWaitMs: { samples: 42, p99: 30, max: 80 } })).join(),
    /connection cap turned the open loop closed: 42 attempts waited .*p99 30 ms, n=42/,
  );
  assert.match(runWarnings(withWait({ connectionCapWaits: 7 })).join(), /connection cap.*7 attempts/);
  assert.deepEqual(runWarnings(withWait({ clientWaitMs: { samples: 0, p99: null, max: null } })), []);
});

test("the summary's own warnings are kept and not repeated", () => {
  const w = runWarnings(
    summary({
      offered: 1000,
      recorded: 1000,
      lateSends: 50,
      warnings: ['50 late sends (5% of origins …)', 'other'],
    }),
  );
  assert.equal(w.filter((x) => /late send/.test(x)).length, 1);
  assert.ok(w.includes('other'));
});
