import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { request } from 'undici';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { runtimePlugin } from '../../orchestrator/lab/RuntimePlugin.js';
import { runUndo } from '../../orchestrator/trigger/journal.js';
import { createTrigger } from '../../orchestrator/trigger/registry.js';
import { tempDir } from '../helpers/cli.js';
import { planOf } from '../helpers/plan.js';

// The provider-outage trigger on the local lab's real stub provider: it takes the
// provider down through the stub's run-time switch, the api's calls fail while it lasts,
// and both its undo and its journal recipe (the path after a crash) bring it back.

const LAB_YAML = (mode: string): string => `
name: provider-outage
lab:
  api: { workers: 4, work: { dist: constant, mean: 1ms } }
  llm: { profile: default, slots: 8, timeout: 5s, retry: { maxAttempts: 1 } }
load: { arrival: constant, rate: 1/s }
client: { timeout: 10s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 1s
  trigger: { kind: provider-outage, mode: ${mode}${mode === 'slow' ? ', slowFactor: 20' : ''}, duration: 1s }
  observe: 1s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;

async function stubState(url: string): Promise<{ down: unknown; slowFactor: number }> {
  const r = await request(`${url}/_stub/state`);
  return (await r.body.json()) as { down: unknown; slowFactor: number };
}

/** One /agent call through the api (one provider call per step); its status. */
async function agentCall(apiUrl: string): Promise<number> {
  const r = await request(`${apiUrl}/agent?steps=1&prompt=50`, { method: 'POST', headersTimeout: 15_000 });
  await r.body.text();
  return r.statusCode;
}

test('provider-outage takes the stub provider down through its switch; undo and the journal recipe bring it back', async () => {
  registerRuntimes();
  const plan = planOf(LAB_YAML('unavailable'));
  const plugin = runtimePlugin('local');
  const lab = plugin.lab!(plan.experiment, { seed: 1, logFile: join(tempDir('outage'), 'lab.log') });
  try {
    await lab.up();
    const stub = lab.llmUrl;
    assert.ok(stub, 'the lab names its provider');
    assert.equal(await agentCall(lab.apiUrl), 200, 'the provider answers before the outage');

    const outage = createTrigger(plan.triggers[0]!.spec);
    assert.match(outage.describe(), /LLM provider down/);
    await outage.apply(lab);
    assert.equal((await stubState(stub)).down, 'unavailable');
    const during = await agentCall(lab.apiUrl);
    assert.ok(during >= 500, `the api's provider call fails during the outage (HTTP ${during})`);
    await outage.undo(lab);
    assert.deepEqual(await stubState(stub).then((s) => [s.down, s.slowFactor]), [false, 1]);
    assert.equal(await agentCall(lab.apiUrl), 200, 'the provider answers after the outage');

    // After a crash the journal holds only the recipe: it must undo the outage alone.
    await outage.apply(lab);
    const said = runUndo(outage.undoRecipe(lab));
    assert.match(said, /bring the LLM provider back/);
    assert.equal((await stubState(stub)).down, false);

    // The slow mode multiplies the provider's latencies, and is undone to 1.
    const slow = createTrigger(planOf(LAB_YAML('slow')).triggers[0]!.spec);
    await slow.apply(lab);
    assert.equal((await stubState(stub)).slowFactor, 20);
    await slow.undo(lab);
    assert.equal((await stubState(stub)).slowFactor, 1);
  } finally {
    await lab.down();
  }
});
