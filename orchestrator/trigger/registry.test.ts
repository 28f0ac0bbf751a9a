import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpecError } from '../../foundation/errors.js';
import { registerRuntimes, RUNTIME_PLUGINS } from '../cli/runtimes.js';
import { appliesTrigger, refuseOn, runtimePlugin } from '../lab/RuntimePlugin.js';
import { parseExperiment } from '../spec/load.js';
import { describeTriggers } from '../spec/sections/schedule.js';
import { simRefusals } from '../../sim/refusals.js';
import { markFile } from '../../test/fixtures/triggers/markFile.js';
import { specIssues } from '../../test/helpers/specIssues.js';
import { TARGET_CLASSES } from './kind.js';
import { BUILTIN_TRIGGERS, createTrigger, registerTrigger, TRIGGER_KINDS, triggerKinds } from './registry.js';

// The one line a test needs to add a trigger kind (before any experiment is parsed).
registerTrigger(markFile);
registerRuntimes();

const experiment = (trigger: string): string => `
name: plugin
lab: { api: { workers: 4, work: { dist: constant, mean: 10ms } } }
load: { arrival: constant, rate: 40/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 4s, trigger: ${trigger}, observe: 4s }
recovery: { within: 5x, tolerance: 20%, window: 1s, hold: 1s }
`;
const mark = join(tmpdir(), 'metabench-plugin-test', 'mark');

test('every kind module under kinds/ is in the registry, once, with a summary', async () => {
  const dir = new URL('./kinds/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.js') && !f.endsWith('.test.js'));
  const exported = (
    await Promise.all(files.map(async (f) => Object.values(await import(new URL(f, dir).href))))
  ).flat();
  const defs = exported.filter(
    (v): v is { kind: string } => typeof v === 'object' && v !== null && 'schema' in v,
  );
  assert.deepEqual(defs.map((d) => d.kind).sort(), [...TRIGGER_KINDS].sort());
  for (const d of BUILTIN_TRIGGERS) {
    assert.ok(defs.includes(d), `${d.kind}: exported from its module is what is registered`);
    assert.match(d.summary, /\.$/, `${d.kind}: a sentence for the docs`);
  }
  assert.equal(new Set(TRIGGER_KINDS).size, TRIGGER_KINDS.length);
});

test('a kind registered by a test is parsed, checked, described, created and undone like a built-in one', () => {
  assert.deepEqual(
    triggerKinds().map((d) => d.kind),
    [...TRIGGER_KINDS, 'mark-file'],
  );
  const e = parseExperiment(experiment(`{ kind: mark-file, path: ${mark}, duration: 2s }`), 'p.yaml');
  const t = e.schedule.triggers[0]!;
  assert.equal(t.kind, 'mark-file');
  assert.equal(describeTriggers(e.schedule.triggers, 0.5), `mark ${mark} for 1 s`);
  const trigger = createTrigger(t, 0);
  assert.equal(trigger.target, `file:${mark}`);
  assert.deepEqual(trigger.undoRecipe(undefined as never), {
    kind: 'remove',
    path: mark,
    what: `remove the mark ${mark}`,
  });
  // Its own schema is strict, and its own check against what can work names the field and line.
  const unknown = specIssues(experiment(`{ kind: mark-file, path: ${mark}, size: 3, duration: 2s }`));
  assert.ok(
    unknown.some((i) => i.path === 'schedule.trigger.size' && /unknown field/.test(i.message)),
    JSON.stringify(unknown),
  );
  const outside = specIssues(experiment('{ kind: mark-file, path: /etc/mark, duration: 2s }'));
  assert.deepEqual(
    outside.map((i) => [i.path, i.line]),
    [['schedule.trigger.path', 6]],
  );
  assert.match(outside[0]!.message, /not under a metabench temporary directory/);
});

test('a kind registered once, and only before the schema is built', () => {
  assert.throws(() => registerTrigger(markFile), /already registered/);
  assert.throws(() => registerTrigger({ ...markFile, kind: 'late' }), /before parsing any experiment/);
});

test('runtimes declare which trigger kinds they apply; validation asks them, not their names', () => {
  for (const p of RUNTIME_PLUGINS)
    for (const c of Object.keys(p.capabilities.triggers))
      assert.ok((TARGET_CLASSES as readonly string[]).includes(c), `${p.name}: ${c} is a target class`);
  const e = parseExperiment(experiment(`{ kind: mark-file, path: ${mark}, duration: 2s }`), 'p.yaml');
  // The real runtimes act on the orchestrator's machine, every kind of it, a new one included.
  for (const name of ['local', 'docker', 'swarm'] as const) {
    assert.ok(appliesTrigger(runtimePlugin(name), 'mark-file'), name);
    assert.doesNotThrow(() => refuseOn(runtimePlugin(name), e, 'p.yaml'));
  }
  // The simulation has no host to act on in virtual time: refused, by file and field.
  assert.throws(
    () => refuseOn(runtimePlugin('sim'), e, 'p.yaml'),
    (err: unknown) =>
      err instanceof SpecError &&
      err.issues.length === 1 &&
      err.issues[0]!.file === 'p.yaml' &&
      err.issues[0]!.path === 'schedule.trigger.kind' &&
      /sim runtime cannot apply a mark-file trigger \(it acts on the machine the orchestrator runs on/.test(
        err.issues[0]!.message,
      ),
  );
  // What the simulation declares of the built-in link kinds is what it refuses to model (sim/refusals.ts).
  for (const d of BUILTIN_TRIGGERS.filter((k) => k.acts === 'link')) {
    const trigger =
      d.kind === 'partition'
        ? `{ kind: partition, link: redis, duration: 2s }`
        : `{ kind: ${d.kind}, link: redis, ${d.kind === 'latency' ? 'latency: 10ms, ' : d.kind === 'bandwidth' ? 'rate: 10, ' : d.kind === 'slow-close' ? 'delay: 10ms, ' : d.kind === 'loss' ? 'probability: 5%, ' : ''}duration: 2s }`;
    const withCache = experiment(trigger).replace(
      'lab: { api: { workers: 4, work: { dist: constant, mean: 10ms } } }',
      'lab:\n  api: { workers: 4, work: { dist: constant, mean: 10ms } }\n  cache: { ttl: 1h }\n  db: { keys: 10, pool: 4, query: { dist: constant, mean: 1ms } }',
    );
    const x = parseExperiment(
      withCache.replace(
        'rate: 40/s',
        'rate: 40/s, mix: [{ name: r, share: 100%, key: { dist: uniform, keys: 10 } }]',
      ),
      'p.yaml',
    );
    assert.equal(appliesTrigger(runtimePlugin('sim'), d.kind), simRefusals(x).length === 0, d.kind);
  }
});

test('cpu-limit: the local, docker and swarm runtimes declare a CPU quota; the simulation refuses it by file and field', () => {
  const e = parseExperiment(
    experiment('{ kind: cpu-limit, target: api, cpus: 0.5, duration: 2s }'),
    'c.yaml',
  );
  assert.equal(describeTriggers(e.schedule.triggers), 'limit api to 0.5 CPU for 2 s');
  for (const name of ['local', 'docker', 'swarm'] as const)
    assert.doesNotThrow(() => refuseOn(runtimePlugin(name), e, 'c.yaml'));
  for (const name of ['sim'] as const)
    assert.throws(
      () => refuseOn(runtimePlugin(name), e, 'c.yaml'),
      (err: unknown) =>
        err instanceof SpecError &&
        err.issues[0]!.path === 'schedule.trigger.kind' &&
        new RegExp(`${name} runtime cannot apply a cpu-limit trigger`).test(err.issues[0]!.message),
      name,
    );
});
