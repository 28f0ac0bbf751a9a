import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpecError } from '../../foundation/errors.js';
import { ExitCode } from '../../foundation/exitCodes.js';
import { MIN_TREND_S } from '../analysis/outcome.js';
import { dryRun, formatDryRun } from './dryRun.js';
import { loadExperimentFile, parseExperiment } from './load.js';
import { planRun } from './plan.js';
import { refuseScale } from './refuseScale.js';
import { brokenScaleLimits, plannedGoodputPerS, scaleLimits, smallestAcceptedScale } from './scaleLimits.js';
import { MIN_TREND_MS, timeConstants } from './timeConstants.js';

const stormText = readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');
const plan = (text: string, scale = 1) => planRun(parseExperiment(text, 'x.yaml'), { scale, run: 1 });

test('the noise floor: tolerance ≥ 3/√(goodput × window); retry-storm (280/s, 15%, 5 s) accepts 0.34, bound by its observation', () => {
  const p = plan(stormText);
  assert.equal(plannedGoodputPerS(p), 280);
  const noise = scaleLimits(p).find((l) => l.path.join('.') === 'recovery.tolerance')!;
  // W·f ≥ 9 / (G tol²) = 9 / (280 × 0.0225) s
  assert.ok(Math.abs(noise.boundMs - 9000 / (280 * 0.0225)) < 1e-6);
  assert.ok(Math.abs(noise.minScale - 9 / (280 * 0.0225 * 5)) < 1e-9);
  // The observation (180 s) must leave the trend test a 20 s tail: 60 / 180.
  assert.equal(smallestAcceptedScale(p), 0.34);
  assert.deepEqual(brokenScaleLimits(p, 0.34), []);
  assert.deepEqual(
    brokenScaleLimits(p, 0.33).map((l) => l.path.join('.')),
    ['schedule.observe'],
  );
  assert.deepEqual(
    brokenScaleLimits(p, 0.28).map((l) => l.path.join('.')),
    ['schedule.observe', 'recovery.tolerance'],
  );
  // A 10% tolerance: 9 / (280 × 0.01 × 5) = 0.643, so 0.65.
  assert.equal(smallestAcceptedScale(plan(stormText.replace('tolerance: 15%', 'tolerance: 10%'))), 0.65);
});

test("the issue's example: at 75/s a 10% tolerance over 1 s windows is refused at any scale, with the tolerance that would do", () => {
  const text = stormText
    .replace('rate: 70% capacity # 280/s against a nominal 8 / 20 ms = 400/s', 'rate: 75/s')
    .replace('tolerance: 15%, window: 5s', 'tolerance: 10%, window: 1s');
  assert.match(text, /tolerance: 10%, window: 1s/);
  const p = plan(text, 1);
  assert.ok(smallestAcceptedScale(p) > 1);
  const dir = mkdtempSync(join(tmpdir(), 'scale-'));
  const file = join(dir, 'noisy.yaml');
  writeFileSync(file, text);
  const e = loadExperimentFile(file);
  assert.throws(
    () => refuseScale(planRun(e, { scale: 1, run: 1, sourceFile: file }), file),
    (err: unknown) => {
      assert.ok(err instanceof SpecError);
      assert.equal(err.exitCode, ExitCode.invalidSpec);
      assert.equal(err.issues.length, 1);
      const i = err.issues[0]!;
      assert.equal(i.file, file);
      assert.equal(i.path, 'recovery.tolerance');
      assert.equal(i.line, text.split('\n').findIndex((l) => l.startsWith('recovery:')) + 1);
      // 3/√(75 × 1) = 34.6%
      assert.match(i.message, /no scale is accepted.*raise recovery\.tolerance to 35%/);
      return true;
    },
  );
});

test("a trigger outlasts the api's request timeout by 2×: error-path accepts 0.2 for it, and is refused below, naming the field's line and the smallest scale", () => {
  const file = new URL('../../../experiments/error-path.yaml', import.meta.url).pathname;
  const e = loadExperimentFile(file);
  const p = planRun(e, { scale: 1, run: 1, sourceFile: file });
  const t = scaleLimits(p).find((l) => l.bound.includes('lab.api.requestTimeout'))!;
  assert.deepEqual(t.path, ['schedule', 'trigger', 'duration']);
  assert.equal(t.boundMs, 1000);
  assert.equal(t.minScale, 0.2);
  assert.throws(
    () => refuseScale(planRun(e, { scale: 0.15, run: 1, sourceFile: file }), file),
    (err: unknown) => {
      assert.ok(err instanceof SpecError);
      const i = err.issues.find((x) => x.path === 'schedule.trigger.duration')!;
      const text = readFileSync(file, 'utf8');
      assert.equal(i.line, text.split('\n').findIndex((l) => /^ {2}trigger:/.test(l)) + 1);
      assert.match(i.message, /below the smallest scale this experiment accepts, 0\.57/);
      assert.match(i.message, /2 × the api request timeout \(lab\.api\.requestTimeout\): 1 s/);
      return true;
    },
  );
});

test('a constant that already outlasts a duration at scale 1 sets no limit (scaling keeps the order); one it outlasted does', () => {
  // cache-stampede's TTL (1 h) is far above its flush; db-pause's (10 s) is below its 20 s pause.
  const limitsOf = (name: string) => {
    const file = new URL(`../../../experiments/${name}.yaml`, import.meta.url).pathname;
    return scaleLimits(planRun(loadExperimentFile(file), { scale: 1, run: 1, sourceFile: file }));
  };
  assert.ok(!limitsOf('cache-stampede').some((l) => l.bound.includes('TTL')));
  const ttl = limitsOf('db-pause').find((l) => l.bound.includes('TTL'))!;
  assert.equal(ttl.minScale, 0.5);
  assert.ok(
    timeConstants(loadExperimentFile('experiments/db-pause.yaml')).some((c) => c.from === 'lab.cache.ttl'),
  );
});

test("the trend test's shortest tail is the analysis's", () => {
  assert.equal(MIN_TREND_MS, MIN_TREND_S * 1000);
});

test('the dry run prints the constants that do not scale beside the scaled durations, and the smallest accepted scale', () => {
  const p = plan(stormText, 0.34);
  const text = formatDryRun(p, dryRun(p, 1));
  assert.match(text, /time constants \(not scaled\):\n {4}client timeout +500ms {2}client\.timeout\n/);
  assert.match(
    text,
    /recovery window \(recovery\.tolerance\) +1\.7s ≥ 1\.429s, the one at which tolerance 15% is the noise floor/,
  );
  assert.match(text, /smallest accepted scale: 0\.34\n/);
  const below = plan(stormText, 0.2);
  assert.match(
    formatDryRun(below, dryRun(below, 1)),
    /recovery window \(recovery\.tolerance\) +1s < REFUSED: 1\.429s/,
  );
});
