import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arrivalsFor } from '../../run/load.js';
import { dryRun, formatDryRun } from '../dryRun.js';
import { jsonSchemaOf } from '../jsonSchema.js';
import { loadExperimentFile } from '../load.js';
import { describeLoad } from '../loadPlan.js';
import { planRun } from '../plan.js';
import { ARRIVAL_KINDS, SHAPE_NAMES, expectedArrivalsIn, generatorOf, shapeOf } from './index.js';

const retryStorm = readFileSync(new URL('../../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');

test('every arrival shape round-trips: spec → plan → arrival process → description, and is in the JSON Schema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'i18-registries-arrivals-'));
  try {
    // The replay example's trace, relative to the experiment file.
    writeFileSync(join(dir, 'trace.csv'), 't_s,rate\n0,50\n1,80\n2,120\n');
    const loadSchema = (jsonSchemaOf('experiment') as { properties: { load: { properties: object } } })
      .properties.load.properties;
    assert.ok(SHAPE_NAMES.length >= 6);
    for (const k of SHAPE_NAMES) {
      const file = join(dir, `${k}.yaml`);
      writeFileSync(file, retryStorm.replace('rate: 70% capacity', `${k}: ${shapeOf(k).example}`));
      const e = loadExperimentFile(file);
      assert.notEqual(e.load[k], undefined, k);
      const plan = planRun(e, { scale: 0.1, run: 1, sourceFile: file });
      const g = generatorOf(plan.load.arrival);
      assert.equal(g.kind, plan.load.arrival.kind, k);
      const span = { startMs: 0, endMs: plan.totalMs };
      if (plan.load.model === 'open') {
        const arrivals = arrivalsFor(plan);
        const first = arrivals.next();
        assert.ok(first !== undefined && first >= 0 && first < plan.totalMs, `${k}: first arrival ${first}`);
        assert.ok(arrivals.describe().length > 0, k);
        assert.ok(g.expectedOrigins(plan.load.arrival, span)! > 0, k);
        assert.ok(expectedArrivalsIn(plan.load.arrival, span)! > 0, k);
      } else {
        assert.throws(() => arrivalsFor(plan), /closed loop has no arrival process/);
        assert.equal(g.expectedOrigins(plan.load.arrival, span), null);
      }
      assert.ok(describeLoad(e.load).length > 0, k);
      assert.match(formatDryRun(plan, dryRun(plan, 1)), /expected origin requests/, k);
      assert.ok(k in loadSchema, `${k} is in the JSON Schema's load section`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every arrival kind file under arrivals/ is in the registry', async () => {
  const here = new URL('.', import.meta.url);
  const files = readdirSync(here).filter(
    (f) => f.endsWith('.js') && !/^(index|kind)\.js$|\.test\.js$/.test(f),
  );
  const registered = new Set<unknown>(Object.values(ARRIVAL_KINDS));
  for (const f of files) {
    const mod = (await import(new URL(f, here).href)) as Record<string, unknown>;
    const defs = Object.values(mod).filter(
      (v) => typeof v === 'object' && v !== null && ('shape' in v || 'generator' in v),
    );
    assert.ok(defs.length > 0, `${f} defines an arrival kind`);
    for (const d of defs) assert.ok(registered.has(d), `${f}'s kind is in ARRIVAL_KINDS (arrivals/index.ts)`);
  }
});
