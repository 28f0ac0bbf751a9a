import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OutcomeKind } from '../../bench/outcome.js';
import type { SpecIssue } from '../../foundation/errors.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import type { RunSummary } from './summary.js';
import { syntheticRun } from '../../test/helpers/syntheticRun.js';

// Per-class p95, ttftP95 and errorRatio (the former load.mix[].thresholds) are judged by the
// one hypothesis judge, in the baseline and after recovery; a user-cancelled origin is not
// a failure; no samples is unmeasured, never a pass.

const FILE = [
  'name: class-thresholds',
  'lab:',
  '  api:',
  '    workers: 4',
  '    work: { dist: constant, mean: 10ms }',
  'load:',
  '  rate: 10/s',
  '  mix:',
  '    - { name: read, share: 60% }',
  // The deprecated spelling: read into hypothesis.classes.chat.
  '    - { name: chat, share: 30%, method: POST, path: /chat, thresholds: { p95: 1s, ttftP95: 500ms, errorRatio: 5% } }',
  '    - { name: agent, share: 10%, method: POST, path: /agent }',
  'client: { timeout: 3s }',
  'hypothesis:',
  "  p95: '<= 1s'",
  "  ttftP95: '<= 1s'",
  '  classes:',
  "    read: { ttftP95: '<= 1s' }",
  "    agent: { p95: '<= 1s', ttftP95: '<= 1s', errorRatio: '<= 1%' }",
  'schedule:',
  '  warmup: 2s',
  '  baseline: 10s',
  '  trigger: { kind: pause, target: api, duration: 2s }',
  '  observe: 20s',
  'recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }',
].join('\n');

/**
 * 10 origins a second: 6 read (50 ms), 3 chat (streamed: 600 ms, TTFT 200 ms before the
 * trigger and 700 ms after it; every third chat cancelled by the user after 300 ms; after
 * the trigger one chat in four that is not cancelled fails with a 500), the tenth read too:
 * agent gets no origin. During the trigger (12-14 s) every origin is refused at once.
 */
function run(file = FILE): { s: RunSummary; warnings: SpecIssue[]; baselineCancelled: number } {
  const warnings: SpecIssue[] = [];
  const e = parseExperiment(file, 'x.yaml', [], (w) => warnings.push(w));
  const plan = planRun(e, { scale: 1, run: 1 });
  let chats = 0;
  let baselineCancelled = 0;
  const s = syntheticRun(plan, {
    classes: ['read', 'chat', 'agent'],
    windows: [{ name: 'baseline', ...plan.phases.baseline }],
    answer: (i, t) => {
      const cls = i % 10 >= 6 && i % 10 <= 8 ? 1 : 0;
      const after = t >= 14_000;
      let kind: OutcomeKind = 'ok';
      let ms = cls === 1 ? 600 : 50;
      if (t >= 12_000 && t < 14_000) [kind, ms] = ['conn-refused', 1];
      else if (cls === 1) {
        const n = chats++;
        if (n % 3 === 0) [kind, ms] = ['abandoned', 300];
        else if (after && n % 4 === 1) kind = 'http-5xx';
        if (kind === 'abandoned' && t + ms >= 2000 && t + ms < 12_000) baselineCancelled++;
      }
      return {
        cls,
        kind,
        ms,
        ...(cls === 1 && kind === 'ok'
          ? { stream: { ttftMs: after ? 700 : 200, itlMs: 20, tokens: 20, done: true } }
          : {}),
      };
    },
  });
  return { s, warnings, baselineCancelled };
}

test('p95, ttftP95 and errorRatio are judged per class and globally, in the baseline and after recovery', () => {
  const { s, warnings, baselineCancelled } = run();
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.path, 'load.mix.1.thresholds');
  const key = (h: RunSummary['hypothesis'][number]) => `${h.window} ${h.class ?? 'all'} ${h.metric}`;
  assert.deepEqual(
    s.hypothesis.map((h) => `${key(h)}: ${h.verdict}`),
    [
      'baseline all p95: pass',
      'baseline all ttftP95: pass',
      // read answers are not streamed: no TTFT sample, unmeasured (never a pass).
      'baseline read ttftP95: unmeasured',
      'baseline agent p95: unmeasured',
      'baseline agent errorRatio: unmeasured',
      'baseline agent ttftP95: unmeasured',
      'baseline chat p95: pass',
      // Cancelled chats are not failures: 0 failed of the chats that ended otherwise.
      'baseline chat errorRatio: pass',
      'baseline chat ttftP95: pass',
      'afterRecovery all p95: pass',
      'afterRecovery all ttftP95: pass',
      'afterRecovery read ttftP95: unmeasured',
      'afterRecovery agent p95: unmeasured',
      'afterRecovery agent errorRatio: unmeasured',
      'afterRecovery agent ttftP95: unmeasured',
      'afterRecovery chat p95: pass',
      // One in four of the chats not cancelled fails after the trigger: 25% > 5%.
      'afterRecovery chat errorRatio: fail',
      // TTFT 700 ms after the trigger, over its 500 ms.
      'afterRecovery chat ttftP95: fail',
    ],
  );
  // Validity check 2 counts every per-class entry, the former mix thresholds included: an
  // unmeasured one in the baseline means the steady state was not shown to hold.
  assert.deepEqual(
    s.validity.failed.map((f) => [f.check, f.value]),
    [
      [
        'baseline',
        'read ttftP95 unmeasured (unmeasured), agent p95 unmeasured (unmeasured), agent errorRatio unmeasured (unmeasured), agent ttftP95 unmeasured (unmeasured)',
      ],
    ],
  );
  // Without the thresholds nothing can measure, the chat's held in the baseline: a valid run.
  const held = run(FILE.replace(/\n {2}classes:\n.*\n.*\n/, '\n')).s;
  assert.equal(held.validity.valid, true, JSON.stringify(held.validity.failed));
  assert.equal(held.outcome, 'recovered');
  assert.equal(held.hypothesis.filter((h) => h.verdict === 'fail').length, 2, 'chat, after recovery');
  const by = (k: string) => s.hypothesis.find((h) => key(h) === k)!;
  assert.equal(by('baseline chat ttftP95').threshold, '<= 500ms');
  assert.ok(Math.abs(by('baseline chat ttftP95').value! - 200) < 1);
  assert.ok(Math.abs(by('afterRecovery chat ttftP95').value! - 700) < 1);
  assert.ok(Math.abs(by('baseline chat p95').value! - 600) < 1);
  // Global p95: a quarter of the successes are 600 ms chats, above the 95th rank.
  assert.ok(Math.abs(by('baseline all p95').value! - 600) < 1);
  // Global TTFT is over the streamed successes only: the chats' count.
  assert.equal(by('baseline all ttftP95').samples, by('baseline chat ttftP95').samples);
  // The chats' error ratio: cancelled ones are neither in the numerator nor the denominator.
  const err = by('baseline chat errorRatio');
  assert.ok(baselineCancelled >= 9, `${baselineCancelled} chats cancelled in the baseline`);
  assert.equal(err.value, 0);
  assert.equal(err.samples, by('baseline chat p95').samples, 'successes + failures, no cancelled');
  const afterErr = by('afterRecovery chat errorRatio');
  assert.ok(afterErr.value! > 0.2 && afterErr.value! < 0.3, `about 1 in 4: ${afterErr.value}`);
  for (const h of s.hypothesis.filter((x) => x.verdict === 'unmeasured')) {
    assert.equal(h.samples, 0);
    assert.equal(h.value, null);
  }
});

test('a global ttftP95 or p95 is refused as a threshold it cannot parse, like any other', () => {
  assert.throws(
    () =>
      parseExperiment(
        FILE.replace("  ttftP95: '<= 1s'", "  ttftP95: '<= 5%'"),
        'x.yaml',
        [],
        () => undefined,
      ),
    /hypothesis\.ttftP95/,
  );
});
