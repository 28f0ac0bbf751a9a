import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRng } from '../foundation/rng.js';
import { SpecError } from '../foundation/errors.js';
import { ExitCode } from '../foundation/exitCodes.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import { checkReplicas } from '../orchestrator/run/client.js';
import { runExperiment } from '../orchestrator/run/runExperiment.js';
import { parseExperiment } from '../orchestrator/spec/load.js';
import { planRun } from '../orchestrator/spec/plan.js';
import { startCli } from '../test/helpers/cli.js';
import { simRuntime } from './runtime.js';
import { SimClock } from './clock.js';
import { SIM_TOXICS, SimLink, ToxicNotModelled } from './link.js';

registerRuntimes();

/**
 * What the simulation cannot model is refused by name, never silently left out: a
 * toxic its links do not model, and an LLM provider in the lab.
 */

for (const type of ['slow_close', 'slicer', 'limit_data'] as const)
  test(`a simulated link refuses the ${type} toxic by name, and keeps none of it`, () => {
    const link = new SimLink('postgres', new SimClock(), seededRng(1, 'link'));
    assert.throws(
      () => link.addToxic({ type, attributes: {} }),
      (err: unknown) =>
        err instanceof ToxicNotModelled &&
        err.message.includes(`cannot model the ${type} toxic`) &&
        err.message.includes('link postgres'),
    );
    assert.deepEqual(link.listToxics(), []);
  });

test('the toxics a simulated link models are added and listed', () => {
  const link = new SimLink('redis', new SimClock(), seededRng(1, 'link'));
  for (const type of SIM_TOXICS) link.addToxic({ type, attributes: {} });
  assert.deepEqual(
    link.listToxics().map((t) => t.type),
    [...SIM_TOXICS],
  );
});

const slowClose = `
name: slow-close-sim
lab:
  api: { workers: 4, work: { dist: constant, mean: 10ms } }
  cache: { ttl: 1h, prewarm: true }
  db: { keys: 100, pool: 4, query: { dist: constant, mean: 20ms } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 2s
  triggers:
    - { kind: latency, link: postgres, latency: 10ms, duration: 1s }
    - { kind: slow-close, link: postgres, delay: 1s, duration: 1s }
  observe: 2s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;

test('an experiment with a slow-close trigger is refused in simulation before any folder is made, naming the file, field and toxic', async () => {
  const e = parseExperiment(slowClose, 'slow.yaml');
  const out = join(mkdtempSync(join(tmpdir(), 'metabench-refusal-')), 'results');
  await assert.rejects(
    runExperiment(e, {
      scale: 1,
      out,
      quiet: true,
      stop: new AbortController().signal,
      sourceFile: 'slow.yaml',
      runtime: 'sim',
      capacity: 'nominal',
    }),
    (err: unknown) =>
      err instanceof SpecError &&
      err.issues.length === 1 &&
      err.issues[0]!.file === 'slow.yaml' &&
      err.issues[0]!.path === 'schedule.triggers.1.kind' &&
      err.issues[0]!.message.includes('slow_close toxic'),
  );
  assert.equal(existsSync(out), false);
});

test('the simulation runtime refuses an LLM lab, naming the file and lab.llm', () => {
  const file = new URL('../../experiments/llm-platform.yaml', import.meta.url);
  const e = parseExperiment(readFileSync(file, 'utf8'), 'experiments/llm-platform.yaml');
  const plan = planRun(e, { scale: 0.1, run: 1, sourceFile: 'experiments/llm-platform.yaml' });
  assert.throws(
    () => simRuntime(plan, { worstOriginMs: 0 }),
    (err: unknown) =>
      err instanceof SpecError &&
      /^experiments\/llm-platform\.yaml: lab\.llm: not simulated/.test(err.message),
  );
});

test('metabench run --runtime sim on an LLM lab exits with the spec error, naming the file and field', async () => {
  const r = await startCli(['run', 'experiments/llm-platform.yaml', '--runtime', 'sim', '--quiet']).done;
  assert.equal(r.code, ExitCode.invalidSpec, r.stderr);
  assert.match(
    r.stderr,
    /experiments\/llm-platform\.yaml: lab\.llm: not simulated \(--runtime sim\): .*LLM provider/,
  );
});

test('the simulated transport reaches the api replicas its lab runs: a client balancing over more is refused before the run', () => {
  const file = new URL('../../experiments/retry-storm.yaml', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const e = parseExperiment(text, 'experiments/retry-storm.yaml');
  const rt = simRuntime(planRun(e, { scale: 0.1, run: 1 }), { worstOriginMs: 0 });
  const transport = rt.transport(rt.sim.clock);
  assert.doesNotThrow(() => checkReplicas(1, transport));
  assert.throws(
    () => checkReplicas(2, transport),
    /balances over 2 api replicas, but this runtime's transport reaches 1 \(this runtime's lab runs one api\)/,
  );
  const three = parseExperiment(text.replace('workers: 8', 'replicas: 3, workers: 8'), 'three.yaml');
  assert.equal(three.lab!.api.replicas, 3);
  const rt3 = simRuntime(planRun(three, { scale: 0.1, run: 1 }), { worstOriginMs: 0 });
  assert.doesNotThrow(() => checkReplicas(3, rt3.transport(rt3.sim.clock)));
});
