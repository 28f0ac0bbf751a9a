import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { VirtualClock } from '../../../foundation/clock.js';
import { policyEnv, type ClientPolicy } from '../../../bench/policy/ClientPolicy.js';
import type { PolicyPresence } from '../../../bench/record/Recorder.js';
import { seededRng } from '../../../foundation/rng.js';
import { clientModel, describeClient } from '../../run/client.js';
import { jsonSchemaOf } from '../jsonSchema.js';
import { parseExperiment } from '../load.js';
import { CLIENT_POLICIES, CLIENT_STACK } from './index.js';
import type { ClientPolicyDef, InstanceState } from './kind.js';

const retryStorm = readFileSync(new URL('../../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');
/** Where the Recorder's observer would sit: here it records nothing. */
const passThrough: ClientPolicy = (next) => next;
const CLIENT = '  timeout: 500ms\n  retry: { policy: immediate, maxAttempts: 4 }\n';

test('every client policy round-trips: spec → client model → its layer → description, and is in the JSON Schema', () => {
  const clientSchema = (
    jsonSchemaOf('experiment') as { properties: { client: { properties: Record<string, unknown> } } }
  ).properties.client.properties;
  const env = policyEnv(new VirtualClock(), seededRng(1));
  for (const [name, d] of Object.entries(CLIENT_POLICIES) as [string, ClientPolicyDef<never, object>][]) {
    const lines = [name === 'timeout' ? '' : '  timeout: 500ms', d.example ? `  ${d.example}` : ''];
    const e = parseExperiment(retryStorm.replace(CLIENT, `${lines.filter(Boolean).join('\n')}\n`), 'x.yaml');
    // Over three api replicas, so that the balancer has a layer to build.
    const model = clientModel(e.client, 3);
    // Its part of the model is in the client's model as it planned it.
    const part = d.model(e.client as never) as Record<string, unknown>;
    for (const [k, v] of Object.entries(part)) assert.deepEqual((model as never)[k], v, `${name}.${k}`);
    if (d.layer) {
      let state: InstanceState = {};
      for (const p of CLIENT_STACK) if (p.state) state = { ...state, ...p.state(model, env) };
      const layer = d.layer.build(model, { env, state, observe: passThrough });
      assert.equal(typeof layer, 'function', `${name} builds its layer from its example`);
      for (const p of CLIENT_STACK) p.dispose?.(state);
    }
    if (d.describe) {
      const text = d.describe.text(e.client as never, { ...e.client, deadline: e.client.deadline ?? 3000 });
      assert.ok(text && text.length > 0, `${name} describes its example`);
      if (name !== 'propagateDeadline') assert.ok(describeClient(e.client).includes(text), name);
    }
    for (const field of Object.keys(d.fields))
      assert.ok(field in clientSchema, `${field} is in the JSON Schema`);
  }
});

test('the stack is built in the documented order, outermost first', () => {
  const at = Object.values(CLIENT_POLICIES).flatMap((d) => ('layer' in d ? [d.layer.at] : []));
  assert.equal(new Set(at).size, at.length, 'no two policies share a place in the stack');
  const order = Object.entries(CLIENT_POLICIES)
    .flatMap(([n, d]) => ('layer' in d ? [[n, d.layer.at] as const] : []))
    .sort((a, b) => a[1] - b[1])
    .map(([n]) => n);
  assert.deepEqual(order, [
    'abandon',
    'retry',
    'hedge',
    'breaker',
    'throttle',
    'balance',
    'observe',
    'timeout',
    'propagateDeadline',
  ]);
});

test('every client policy file under policies/ is in the registry', async () => {
  const here = new URL('.', import.meta.url);
  const files = readdirSync(here).filter(
    (f) => f.endsWith('.js') && !/^(index|kind)\.js$|\.test\.js$/.test(f),
  );
  const registered = new Set<unknown>(Object.values(CLIENT_POLICIES));
  for (const f of files) {
    const mod = (await import(new URL(f, here).href)) as Record<string, unknown>;
    const defs = Object.values(mod).filter(
      (v) => typeof v === 'object' && v !== null && 'fields' in v && 'model' in v,
    );
    assert.ok(defs.length > 0, `${f} defines a client policy`);
    for (const d of defs)
      assert.ok(registered.has(d), `${f}'s policy is in CLIENT_POLICIES (policies/index.ts)`);
  }
});

// Type-level: every policy the Recorder reports on is in the registry; one missing from
// CLIENT_POLICIES fails to compile here.
const reported: Record<Exclude<keyof PolicyPresence, 'clients'>, keyof typeof CLIENT_POLICIES> = {
  budget: 'budget',
  breaker: 'breaker',
  throttle: 'throttle',
  hedge: 'hedge',
  abandon: 'abandon',
};

test('every policy the Recorder reports on has its entry in the registry', () => {
  for (const name of Object.values(reported)) assert.ok(name in CLIENT_POLICIES, name);
});
