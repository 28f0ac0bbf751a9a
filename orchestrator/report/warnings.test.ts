import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summary } from '../../test/helpers/reportData.js';
import { runWarnings } from './warnings.js';

test('a clean run has no warning', () => {
  assert.deepEqual(runWarnings(summary()), []);
});

test('offered ≠ recorded, schedule lag past its limit, omission factor above 2 each warn, from the figures alone', () => {
  assert.match(
    runWarnings(summary({ offered: 1000, recorded: 990, lateSends: 0 })).join(),
    /offered \(1000\) != recorded \(990\)/,
  );
  // Late sends alone do not warn while the lag p99 (0.9 ms) is within its limit (10 ms).
  assert.deepEqual(runWarnings(summary({ offered: 1000, recorded: 1000, lateSends: 46 })), []);
  const lagged = summary({
    offered: 1000,
    recorded: 1000,
    lateSends: 46,
    scheduleLagMs: { ...summary().scheduleLagMs, p99: 12.5 },
  });
  assert.match(
    runWarnings(lagged).join(),
    /46 late sends \(4\.6% of origins.*schedule lag p99 12\.5 ms above its limit of 10 ms \(test\)/,
  );
  // A summary from before run validity has no lag limit: late sends above 0.1% warn there.
  const { validity: _v, ...old } = summary({ offered: 1000, recorded: 1000, lateSends: 2 });
  assert.match(runWarnings(old as never).join(), /2 late sends \(0\.2% of origins/);
  const { validity: _w, ...oldOk } = summary({ offered: 1000, recorded: 1000, lateSends: 1 });
  assert.deepEqual(runWarnings(oldOk as never), []); // 0.1% is the limit, not above it
  assert.deepEqual(runWarnings(summary({ omissionFactor: 2 })), []);
  assert.match(runWarnings(summary({ omissionFactor: 2.5 })).join(), /omission factor 2\.5 > 2/);
});

test("the client's connection cap turning the open loop closed warns when the summary reports waits", () => {
  const wait = (samples: number, p99: number | null) => ({
    samples,
    mean: p99,
    p50: p99,
    p90: p99,
    p99,
    p999: p99,
    max: p99,
  });
  assert.match(
    runWarnings(summary({ clientWait: wait(42, 30) })).join(),
    /connection cap turned the open loop closed: 42 attempts waited .*p99 30 ms, n=42/,
  );
  assert.deepEqual(runWarnings(summary({ clientWait: wait(0, null) })), []);
  // An older summary without the field: nothing to say.
  assert.deepEqual(runWarnings(summary()), []);
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
