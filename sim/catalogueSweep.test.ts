import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadSweepFile } from '../orchestrator/spec/sweep.js';
import { planRun } from '../orchestrator/spec/plan.js';
import { bistableRange } from '../orchestrator/model/fluid.js';
import { fluidSystemOf } from '../orchestrator/model/predict.js';

// Issue 17: a catalogue sweep over the offered load claims to cross the boundary where
// the retry storm begins, the fluid model's lower edge cμ/m (below it even a client whose
// every attempt times out sends m·λ < cμ). Its points must lie on both sides of it, and
// the file's comment must state the edge the model computes.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sweeps = readdirSync(join(ROOT, 'experiments')).filter((f) => f.endsWith('.sweep.yaml'));

for (const f of sweeps) {
  const file = join(ROOT, 'experiments', f);
  const loaded = loadSweepFile(file);
  if (!loaded.factors.some((x) => x.path === 'load.rate')) continue;
  test(`${f}: its offered loads lie on both sides of the model's lower edge cμ/m`, () => {
    // At nominal capacity (no stored calibration: planRun without one).
    const rates = loaded.experiments.map((e) => planRun(e, { scale: 1, run: 1 }).ratePerS);
    const edges = loaded.experiments.map((e) => bistableRange(fluidSystemOf(e)).lowerPerS);
    // The factor is the load alone: every point has the same edge.
    assert.ok(
      edges.every((x) => Math.abs(x - edges[0]!) < 1e-9),
      `edges ${edges.join(', ')}`,
    );
    const edge = edges[0]!;
    const below = rates.filter((r) => r < edge);
    const above = rates.filter((r) => r > edge);
    assert.ok(
      below.length >= 1 && above.length >= 1,
      `rates ${rates.join(', ')}/s against the lower edge ${edge}/s`,
    );
    const text = readFileSync(file, 'utf8');
    assert.ok(
      text.includes(`${Math.round(edge)}/s`),
      `${f} states the edge, ${Math.round(edge)}/s, in its comment`,
    );
  });
}
