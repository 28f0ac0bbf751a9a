import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../../test/helpers/cli.js';
import { isBenchError } from '../../foundation/errors.js';
import { loadExperimentFile } from '../spec/load.js';
import { parseSet, type Override } from '../../foundation/overrides.js';
import { planRun } from '../spec/plan.js';
import { differingPaths, readLabSweep } from './labSweep.js';

const FILE = join(REPO, 'experiments', 'retry-storm.yaml');

interface FakePoint {
  readonly values: Record<string, unknown>;
  readonly verdict: 'metastable' | 'recovered' | 'unmeasured';
  /** What the point's runs really offered (a measured capacity, say); default: as planned. */
  readonly ratePerS?: number;
}

function set(text: string): Override {
  const r = parseSet(text);
  assert.ok(r.ok);
  return r.value;
}

/** A sweep results folder as runSweep writes it (sweep-plan.json, sweep.json, point-<k>/), without running it. */
function fakeSweep(
  dir: string,
  o: {
    factors: string[];
    points: FakePoint[];
    scale?: number;
    manifests?: boolean;
    file?: string;
    sets?: string[];
    /** Change the experiment the points "ran" (another one, or other settings). */
    ran?: (e: Record<string, unknown>) => Record<string, unknown>;
  },
): string {
  const scale = o.scale ?? 0.2;
  const file = o.file ?? FILE;
  mkdirSync(dir, { recursive: true });
  const points = o.points.map((p, i) => ({ index: i + 1, values: p.values }));
  writeFileSync(
    join(dir, 'sweep-plan.json'),
    JSON.stringify({
      name: 'fake',
      file: 'fake.sweep.yaml',
      experimentFile: file,
      design: 'factorial',
      runtime: 'sim',
      repeat: 1,
      scale,
      overrides: o.sets ?? [],
      factors: o.factors.map((path) => ({ path, values: [], reference: null })),
      points,
    }),
  );
  writeFileSync(
    join(dir, 'sweep.json'),
    JSON.stringify({
      design: 'grid',
      factors: o.factors.map((name) => ({ name, unit: 'as written' })),
      figures: [{ name: 'goodput after', unit: 'req/s' }],
      rows: o.points.map((p) => ({
        factors: p.values,
        figures: { 'goodput after': null },
        verdict: p.verdict,
        runs: 1,
        metastableRuns: p.verdict === 'metastable' ? 1 : 0,
      })),
    }),
  );
  o.points.forEach((p, i) => {
    const pd = join(dir, `point-${i + 1}`);
    mkdirSync(join(pd, 'run-1'), { recursive: true });
    const e = loadExperimentFile(file, [
      ...(o.sets ?? []).map(set),
      ...Object.entries(p.values).map(([k, v]) => ({ path: k.split('.'), value: v, source: k })),
    ]);
    const ran = (o.ran ?? ((x) => x))(JSON.parse(JSON.stringify({ ...e, repeat: 3 })));
    writeFileSync(join(pd, 'summary.json'), JSON.stringify({ experiment: ran['name'] }));
    if (o.manifests === false) return;
    const plan = planRun(e, { scale, run: 1 });
    writeFileSync(
      join(pd, 'run-1', 'manifest.json'),
      JSON.stringify({ experiment: ran, plan: { ...plan, ratePerS: p.ratePerS ?? plan.ratePerS } }),
    );
  });
  return dir;
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'metabench-labsweep-'));
}

/** Runs f, expecting a BenchError (no stack for the user) whose one-line message matches. */
function refuses(f: () => unknown, message: RegExp, hint?: RegExp): void {
  assert.throws(f, (err: unknown) => {
    assert.ok(isBenchError(err), `not a BenchError: ${String(err)}`);
    assert.equal(err.code, 'E_USAGE');
    assert.match(err.message, message);
    assert.doesNotMatch(err.message, /\n/);
    if (hint) assert.match(err.hint ?? '', hint);
    return true;
  });
}

test('readLabSweep: each point on the map axes, its rate as its runs offered it and its trigger after the sweep scale', () => {
  const root = tmp();
  try {
    const dir = fakeSweep(join(root, 'sw'), {
      factors: ['load.rate', 'schedule.trigger.duration'],
      points: [
        { values: { 'load.rate': '70% capacity', 'schedule.trigger.duration': '5s' }, verdict: 'recovered' },
        // A measured capacity of 350/s: 70% of it, not of the nominal 400/s.
        {
          values: { 'load.rate': '70% capacity', 'schedule.trigger.duration': '10s' },
          verdict: 'metastable',
          ratePerS: 245,
        },
        { values: { 'load.rate': '120/s', 'schedule.trigger.duration': '10s' }, verdict: 'recovered' },
      ],
    });
    const s = readLabSweep(dir, FILE, []);
    assert.equal(s.scale, 0.2);
    assert.equal(s.runtime, 'sim');
    assert.deepEqual(s.factors, ['load.rate', 'schedule.trigger.duration']);
    assert.deepEqual(s.notes, []);
    assert.deepEqual(
      s.points.map((p) => [p.point, p.offeredPerS, p.triggerS, p.verdict, p.factors['load.rate']]),
      [
        [1, 280, 1, 'recovered', '70% capacity'],
        [2, 245, 2, 'metastable', '70% capacity'],
        [3, 120, 2, 'recovered', '120/s'],
      ],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('readLabSweep: a sweep of the load alone takes the trigger from the experiment; without manifests, from its factor values', () => {
  const root = tmp();
  try {
    const dir = fakeSweep(join(root, 'sw'), {
      factors: ['load.rate'],
      scale: 0.5,
      manifests: false,
      points: [
        { values: { 'load.rate': '50% capacity' }, verdict: 'metastable' },
        { values: { 'load.rate': '60/s' }, verdict: 'recovered' },
      ],
    });
    const s = readLabSweep(dir, FILE, []);
    assert.deepEqual(
      s.points.map((p) => [p.offeredPerS, p.triggerS]),
      [
        [200, 5],
        [60, 5],
      ],
    );
    assert.equal(s.notes.length, 2);
    assert.match(s.notes[0]!, /point-1: no run-1\/manifest\.json; .*% capacity of the nominal 400\/s/);
    assert.doesNotMatch(s.notes[1]!, /capacity/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('readLabSweep refuses, naming the folder: none, not a sweep, other factors, another experiment, other settings', () => {
  const root = tmp();
  try {
    refuses(() => readLabSweep(join(root, 'nope'), FILE, []), /^--over .*nope: no such folder$/);

    const run = join(root, 'run');
    mkdirSync(run);
    writeFileSync(join(run, 'summary.json'), '{}');
    refuses(
      () => readLabSweep(run, FILE, []),
      /^--over .*run: no sweep\.json: not the results folder of a sweep$/,
      /one experiment’s results/,
    );

    const garbled = join(root, 'garbled');
    mkdirSync(garbled);
    writeFileSync(join(garbled, 'sweep.json'), '{"design": "grid"');
    refuses(() => readLabSweep(garbled, FILE, []), /garbled\/sweep\.json: cannot read a sweep table/);

    const attempts = fakeSweep(join(root, 'attempts'), {
      factors: ['load.rate', 'client.retry.maxAttempts'],
      points: [
        { values: { 'load.rate': '70% capacity', 'client.retry.maxAttempts': 2 }, verdict: 'recovered' },
      ],
    });
    refuses(
      () => readLabSweep(attempts, FILE, []),
      /attempts\/sweep\.json: the sweep varies client\.retry\.maxAttempts; .* only load\.rate and schedule\.trigger\.duration/,
    );

    const other = fakeSweep(join(root, 'other'), {
      factors: ['load.rate'],
      points: [{ values: { 'load.rate': '70% capacity' }, verdict: 'metastable' }],
      ran: (e) => ({ ...e, name: 'hotos21-retry' }),
    });
    refuses(
      () => readLabSweep(other, FILE, []),
      /other\/point-1: ran experiment hotos21-retry \(.*\), not retry-storm \(.*retry-storm\.yaml\)$/,
      /metabench model .* --over /,
    );
    // The same, read from the point's summary.json when the manifests are gone.
    const otherNoManifest = fakeSweep(join(root, 'other2'), {
      factors: ['load.rate'],
      manifests: false,
      points: [{ values: { 'load.rate': '70% capacity' }, verdict: 'metastable' }],
      ran: (e) => ({ ...e, name: 'hotos21-retry' }),
    });
    refuses(() => readLabSweep(otherNoManifest, FILE, []), /other2\/point-1: ran experiment hotos21-retry/);

    // The sweep ran with --set client.timeout=300ms: the model must be given the same.
    const timeout = fakeSweep(join(root, 'timeout'), {
      factors: ['load.rate'],
      sets: ['client.timeout=300ms'],
      points: [{ values: { 'load.rate': '70% capacity' }, verdict: 'metastable' }],
    });
    refuses(
      () => readLabSweep(timeout, FILE, []),
      /timeout\/point-1\/run-1\/manifest\.json: the point's experiment differs from .*retry-storm\.yaml in client\.timeout$/,
      /the sweep ran with --set client\.timeout=300ms: give model the same --set/,
    );
    assert.equal(readLabSweep(timeout, FILE, [set('client.timeout=300ms')]).points.length, 1);

    const stray = fakeSweep(join(root, 'stray'), {
      factors: ['load.rate'],
      points: [{ values: { 'load.rate': '70% capacity' }, verdict: 'metastable' }],
    });
    writeFileSync(
      join(stray, 'sweep-plan.json'),
      JSON.stringify({
        name: 'fake',
        experimentFile: FILE,
        runtime: 'sim',
        scale: 1,
        points: [{ index: 1, values: { 'load.rate': '90% capacity' } }],
      }),
    );
    refuses(
      () => readLabSweep(stray, FILE, []),
      /stray\/sweep\.json: row 1 .* is no point of .*sweep-plan\.json/,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('differingPaths names the fields where two experiments differ', () => {
  assert.deepEqual(differingPaths({ a: 1, b: { c: 2, d: [1, 2] } }, { a: 1, b: { c: 3, d: [1, 2] } }), [
    'b.c',
  ]);
  assert.deepEqual(differingPaths({ a: [1] }, { a: [1, 2], e: 1 }), ['a', 'e']);
  assert.deepEqual(differingPaths({ a: 1 }, { a: 1 }), []);
});
