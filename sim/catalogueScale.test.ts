import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { simulate } from '../orchestrator/model/simulate.js';
import { planOfFile } from '../test/helpers/plan.js';
import {
  CLAIMED,
  describeOutcome,
  NOT_SIMULATED,
  outcomeOf,
  SCALE_EXCEPTIONS,
  suiteScale,
} from '../test/helpers/catalogue.js';

// Issue 17, point 11: scale does not change outcomes. Every catalogue experiment the
// simulation can model is simulated at the scale the reproduction suite runs it at and
// at scale 1 (same seed); both must come out in the same outcome class (DESIGN.md §2),
// or the suite's scaled run would prove a claim about a different experiment.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const experiments = readdirSync(join(ROOT, 'experiments'))
  .filter((f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

test('the catalogue tables cover every experiment file, and name a reason for every one not simulated', () => {
  assert.deepEqual(Object.keys(CLAIMED).sort(), experiments);
  for (const [name, why] of Object.entries(NOT_SIMULATED)) {
    assert.ok(experiments.includes(name), name);
    assert.ok(why.length > 20, `${name}: a reason`);
  }
  for (const [name, x] of Object.entries(SCALE_EXCEPTIONS)) {
    assert.ok(experiments.includes(name), name);
    assert.ok(x.scale > 0 && x.scale <= 1 && x.why.length > 20, name);
  }
});

test("each catalogue row's expected outcome opens with the class the tests assert", () => {
  const table = readFileSync(join(ROOT, 'experiments/README.md'), 'utf8');
  for (const name of experiments) {
    const row = new RegExp(`^\\| \`${name}\\.yaml\` \\|([^\\n]*)$`, 'm').exec(table);
    assert.ok(row, `${name} has a row`);
    const cells = row[1]!.split(' | ').map((c) => c.trim());
    const expected = cells[2]!;
    const claimed = CLAIMED[name];
    if (claimed === null) assert.doesNotMatch(expected, /\*\*/, `${name}: no outcome class`);
    else assert.match(expected, new RegExp(`^\\*\\*${claimed}\\*\\*`), `${name}: ${expected}`);
  }
});

for (const name of experiments.filter((n) => !(n in NOT_SIMULATED)))
  test(`${name}: the same outcome class at the suite's scale ${suiteScale(name)} as at scale 1, in simulation`, async (t) => {
    const scaled = (await simulate(planOfFile(name, { scale: suiteScale(name) }))).summary;
    const full = (await simulate(planOfFile(name, { scale: 1 }))).summary;
    t.diagnostic(`scale ${suiteScale(name)}: ${describeOutcome(scaled)}`);
    t.diagnostic(`scale 1: ${describeOutcome(full)}`);
    // An invalid run has no outcome to compare, unless invalid is what the row claims.
    if (CLAIMED[name] !== 'invalid')
      for (const s of [scaled, full])
        assert.notEqual(outcomeOf(s), 'invalid', `${name}: ${describeOutcome(s)}`);
    assert.equal(
      outcomeOf(scaled),
      outcomeOf(full),
      `${name}: scale ${suiteScale(name)} → ${describeOutcome(scaled)}; scale 1 → ${describeOutcome(full)}`,
    );
  });
