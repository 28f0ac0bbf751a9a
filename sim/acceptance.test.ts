import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../orchestrator/model/simulate.js';
import { planOfFile } from '../test/helpers/plan.js';

// The lab's verdicts (test/repro/retry-storm.test.ts at --scale 0.2, and the
// docs/commands.md at full scale): retry-storm is metastable, retry-storm-no-retry recovers. The
// simulation of the same files must say the same, at both scales.

for (const scale of [0.2, 1])
  test(`retry-storm at --scale ${scale} is metastable in simulation, as in the lab`, async (t) => {
    const r = await simulate(planOfFile('retry-storm', { scale }));
    const s = r.summary;
    t.diagnostic(
      `goodput ${s.baseline.goodputPerS} → ${s.afterTrigger.goodputPerS}/s, amplification client ${s.afterTrigger.amplification}, server ${s.afterTrigger.amplificationServer}; ${s.recoveryReason}; ${r.clock.fired} events in ${Math.round(r.wallMs)} ms`,
    );
    assert.equal(s.runtime, 'sim');
    assert.equal(s.usable, true, s.warnings.join('; '));
    assert.equal(s.metastable, true, s.recoveryReason);
    assert.equal(s.recovered, false);
    assert.ok(s.afterTrigger.amplification! >= 2);
    assert.ok(s.afterTrigger.goodputPerS! < 0.5 * s.baseline.goodputPerS!);
    assert.ok(s.afterTrigger.amplificationServer! > 1.5);
    assert.ok(
      s.hypothesis.filter((h) => h.window === 'baseline').every((h) => h.verdict === 'pass'),
      JSON.stringify(s.hypothesis),
    );
  });

for (const scale of [0.2, 1])
  test(`retry-storm-no-retry at --scale ${scale} recovers in simulation, as in the lab`, async (t) => {
    const r = await simulate(planOfFile('retry-storm-no-retry', { scale }));
    const s = r.summary;
    t.diagnostic(
      `recovered after ${s.recoveryTimeS} s (deadline ${s.recoveryDeadlineS} s); ${Math.round(r.wallMs)} ms`,
    );
    assert.equal(s.usable, true, s.warnings.join('; '));
    assert.equal(s.recovered, true, s.recoveryReason);
    assert.equal(s.metastable, false);
    assert.ok(s.recoveryTimeS! > 0 && s.recoveryTimeS! <= s.recoveryDeadlineS);
    assert.ok(s.afterTrigger.amplification! <= 1.01);
  });
