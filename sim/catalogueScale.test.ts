import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { inWorkers, SIMULATION_THREAD_LIMITS } from '../foundation/workers.js';
import { outcomeClass, simCannotModel } from '../orchestrator/model/agreement.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';
import { planRun } from '../orchestrator/spec/plan.js';
import { smallestAcceptedScale } from '../orchestrator/spec/scaleLimits.js';
import { claimedOutcomes, experimentPath, suiteScale, type Outcome } from '../test/helpers/catalogue.js';
import type { CatalogueSimJob, CatalogueSimResult } from '../test/helpers/catalogueSimWorker.js';

// Issue 32, points 5 and 8: scale does not change outcomes. Every catalogue experiment the
// simulation can model is simulated at its smallest accepted scale (orchestrator/spec/
// scaleLimits.ts), at 0.5 and at 1, with three seeds each; every run must come out in the
// class the catalogue claims (DESIGN.md §2; recovered and recovered-late are one class),
// and the run the suite makes (the suite's scale, the file's seed) in exactly the outcome
// claimed. A class that changes between scales means the smallest accepted scale is
// wrong: a limit is missing from the rules, not an exception from a list.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const names = readdirSync(join(ROOT, 'experiments'))
  .filter((f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();
const claims = claimedOutcomes();

/** The experiments the simulation models and that claim an outcome, with the scales they are simulated at. */
const cases = names.flatMap((name) => {
  const file = experimentPath(name);
  const e = loadExperimentFile(file);
  const claimed = claims[name];
  if (claimed === null || claimed === undefined || simCannotModel(e) !== null) return [];
  const smallest = smallestAcceptedScale(planRun(e, { scale: 1, run: 1, sourceFile: file }));
  const scales = [...new Set([smallest, 0.5, 1])].filter((s) => s >= smallest).sort((a, b) => a - b);
  // The file's seed first (the run the suite makes), then two more.
  const seeds = [e.seed, e.seed + 1, e.seed + 2];
  return [{ name, file, claimed, smallest, scales, seeds, suite: suiteScale(name) }];
});

/** Every run, simulated once on threads (two at a time: the machine's cores are shared). */
const results = new Map<string, CatalogueSimResult>();
const key = (j: CatalogueSimJob): string => `${j.file} ${j.scale} ${j.seed}`;
const simulated = (async () => {
  const jobs: CatalogueSimJob[] = cases.flatMap((c) =>
    [...new Set([...c.scales, c.suite])].flatMap((scale) =>
      c.seeds.map((seed) => ({ file: c.file, scale, seed })),
    ),
  );
  await inWorkers<CatalogueSimJob, CatalogueSimJob, CatalogueSimResult>(
    new URL('../test/helpers/catalogueSimWorker.js', import.meta.url),
    jobs,
    Math.min(2, availableParallelism()),
    (j) => j,
    new AbortController().signal,
    (j, r) => results.set(key(j), r),
    SIMULATION_THREAD_LIMITS,
  );
})();

test('the catalogue claims an outcome for every experiment but the calibration, and the suite runs at the smallest accepted scale', () => {
  assert.deepEqual(Object.keys(claims).sort(), names);
  assert.deepEqual(
    names.filter((n) => claims[n] === null),
    ['step-test'],
  );
  for (const c of cases) assert.equal(c.suite, Math.max(0.2, c.smallest), c.name);
});

for (const c of cases)
  test(`${c.name}: ${c.claimed} at scales ${c.scales.join(', ')} (seeds ${c.seeds.join(', ')}), in simulation`, async (t) => {
    await simulated;
    const seen: { scale: number; seed: number; outcome: Outcome; described: string }[] = [];
    for (const scale of c.scales)
      for (const seed of c.seeds) {
        const r = results.get(key({ file: c.file, scale, seed }))!;
        seen.push({ scale, seed, ...r });
        t.diagnostic(`scale ${scale}, seed ${seed}: ${r.described}`);
      }
    const table = seen.map((s) => `scale ${s.scale} seed ${s.seed}: ${s.described}`).join('\n  ');
    for (const s of seen)
      assert.equal(
        outcomeClass(s.outcome),
        outcomeClass(c.claimed),
        `${c.name}: the class changed\n  ${table}`,
      );
    // The run the suite makes claims the exact outcome (recovered or recovered-late).
    const suite = results.get(key({ file: c.file, scale: c.suite, seed: c.seeds[0]! }))!;
    assert.equal(suite.outcome, c.claimed, `${c.name} at the suite's scale ${c.suite}: ${suite.described}`);
  });
