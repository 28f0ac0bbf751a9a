import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/cli.js';
import { assertTwinAgrees } from '../helpers/twin.js';
import { assertClaimed, suiteScale } from '../helpers/catalogue.js';
import { readEvents, reproRuntimeArgs } from '../helpers/experiment.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';

// Issue 4's lab acceptance, and issue 17's catalogue claims: the policy variants of
// retry-storm at the suite's scale (0.2: a 2 s pause of the api after 18 s). The
// immediate variant (no policy) is retry-storm.yaml itself, asserted metastable in
// retry-storm.test.ts.

interface Ran {
  readonly s: RunSummary;
  readonly dir: string;
  readonly events: Record<string, unknown>[];
  readonly csv: { header: string[]; rows: string[][] };
  readonly report: string;
}

async function runExperiment(file: string): Promise<Ran> {
  const tmp = tempDir('pol');
  const dir = join(tmp, 'out');
  const scale = suiteScale(file.replace(/^.*\//, '').replace(/\.yaml$/, ''));
  const r = await runCli(
    ['run', file, '--scale', String(scale), '--repeat', '1', '--out', dir, '--quiet', ...reproRuntimeArgs()],
    { METABENCH_STATE_DIR: join(tmp, 'state') },
  );
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(s.offered, s.recorded);
  assert.equal(s.usable, true, s.warnings.join('; '));
  await assertTwinAgrees(file, s);
  const events = readEvents(dir);
  // Every attempt sent is a line; every origin has one outcome.
  assert.equal(events.filter((e) => e['e'] === 'attempt').length, s.attempts);
  assert.equal(events.filter((e) => e['e'] === 'outcome').length, s.offered);
  const lines = readFileSync(join(dir, 'run-1/timeseries.csv'), 'utf8').trim().split('\n');
  const csv = { header: lines[0]!.split(','), rows: lines.slice(1).map((l) => l.split(',')) };
  return { s, dir, events, csv, report: readFileSync(join(dir, 'report.md'), 'utf8') };
}

function column(csv: Ran['csv'], name: string): string[] {
  const i = csv.header.indexOf(name);
  assert.ok(i >= 0, `column ${name}`);
  return csv.rows.map((r) => r[i] ?? '');
}

test('retry-storm-budget recovers, with a client-side amplification after the trigger of at most 1.3', async () => {
  const { s, report } = await runExperiment('experiments/retry-storm-budget.yaml');
  assertClaimed('retry-storm-budget', s);
  assert.ok(s.afterTrigger.amplification! <= 1.3, `amplification ${s.afterTrigger.amplification}`);
  // The budget is what held the retries back.
  assert.ok(s.policies.retriesDeniedByBudget! > 0, JSON.stringify(s.policies));
  assert.match(report, /## Client policies[\s\S]*retries denied by the budget/);
});

test("retry-storm-backoff is metastable: backoff defers the retries but the amplification stays near the immediate variant's", async () => {
  const { s, events } = await runExperiment('experiments/retry-storm-backoff.yaml');
  assertClaimed('retry-storm-backoff', s);
  // Deferred, not removed: up to 4 attempts per origin as with immediate retries.
  assert.ok(s.policies.retries > 0);
  assert.ok(s.afterTrigger.amplification! >= 2, `amplification ${s.afterTrigger.amplification}`);
  assert.ok(
    s.afterTrigger.goodputPerS! < 0.5 * s.baseline.goodputPerS!,
    `goodput ${s.afterTrigger.goodputPerS}/s vs ${s.baseline.goodputPerS}/s`,
  );
  // A retry is sent only after its wait: no second attempt starts at its first's end.
  const byOrigin = new Map<number, { n: number; sentMs: number; endMs: number }[]>();
  for (const e of events)
    if (e['e'] === 'attempt') {
      const list = byOrigin.get(e['origin'] as number) ?? [];
      list.push({ n: e['n'] as number, sentMs: e['sentMs'] as number, endMs: e['endMs'] as number });
      byOrigin.set(e['origin'] as number, list);
    }
  let gaps = 0;
  let sum = 0;
  for (const list of byOrigin.values()) {
    list.sort((a, b) => a.n - b.n);
    for (let i = 1; i < list.length; i++) {
      const gap = list[i]!.sentMs - list[i - 1]!.endMs;
      assert.ok(gap >= -1, `retry ${list[i]!.n} sent ${gap} ms before its predecessor ended`);
      gaps++;
      sum += gap;
    }
  }
  // Full jitter over min(2 s, 100 ms·2^i): the mean wait is tens of ms at least.
  assert.ok(gaps > 0 && sum / gaps > 30, `mean wait ${sum / gaps} ms over ${gaps} retries`);
});

test('retry-storm-breaker recovers: its breaker opens, cuts the storm off, and fails every origin while open', async () => {
  const { s, events, csv, report } = await runExperiment('experiments/retry-storm-breaker.yaml');
  assertClaimed('retry-storm-breaker', s);
  assert.ok(s.policies.breakerOpens! >= 1, JSON.stringify(s.policies));
  assert.ok(s.policies.breakerRejected! > 0);
  assert.ok(s.outcomes['breaker-open'] > 0);
  // Cut off: after the trigger the client sends fewer attempts than origins, not a storm.
  assert.ok(s.afterTrigger.amplification! <= 1.3, `amplification ${s.afterTrigger.amplification}`);
  // While open (one client: from each closed/half-open → open transition to the next
  // transition), no attempt is sent and every origin that arrives fails.
  const moves = events.filter((e) => e['e'] === 'breaker');
  const openSpans: [number, number][] = [];
  for (let i = 0; i < moves.length; i++)
    if (moves[i]!['to'] === 'open')
      openSpans.push([
        moves[i]!['atMs'] as number,
        (moves[i + 1]?.['atMs'] as number | undefined) ?? Infinity,
      ]);
  assert.ok(openSpans.length >= 1);
  // (5 ms of slack at the end: an origin intended just before the half-open move may be sent just after it.)
  const inOpen = (ms: number): boolean => openSpans.some(([a, b]) => ms > a && ms < b - 5);
  const sentWhileOpen = events.filter((e) => e['e'] === 'attempt' && inOpen(e['sentMs'] as number));
  assert.deepEqual(sentWhileOpen, [], 'no attempt is sent while the breaker is open');
  const arrivedWhileOpen = events.filter((e) => e['e'] === 'outcome' && inOpen(e['intendedMs'] as number));
  assert.ok(arrivedWhileOpen.length > 0, 'origins arrived while the breaker was open');
  assert.deepEqual(
    arrivedWhileOpen.filter((e) => e['kind'] !== 'breaker-open'),
    [],
    'every origin that arrives while the breaker is open fails, refused by it',
  );
  // Transitions in events.ndjson: the first one is closed → open; they alternate sensibly.
  const trans = events.filter((e) => e['e'] === 'breaker');
  assert.equal(trans[0]?.['from'], 'closed');
  assert.equal(trans[0]?.['to'], 'open');
  for (let i = 1; i < trans.length; i++) assert.equal(trans[i]!['from'], trans[i - 1]!['to']);
  // The series: the pause makes every attempt fail, so the breaker is open for part of
  // the trigger or the seconds after it.
  const open = column(csv, 'breaker_open').map(Number);
  const phase = column(csv, 'phase');
  assert.ok(open.some((f, i) => f > 0 && (phase[i] === 'trigger' || phase[i] === 'observe')));
  assert.ok(open.every((f) => f >= 0 && f <= 1));
  assert.equal(
    column(csv, 'breaker_opens').reduce((a, v) => a + Number(v), 0),
    s.policies.breakerOpens,
  );
  assert.match(report, /breaker opens/);
});

test('hedging-amplification is metastable: after the trigger the hedges make at least 1.8 attempts per origin', async () => {
  const { s, events, csv } = await runExperiment('experiments/hedging-amplification.yaml');
  assertClaimed('hedging-amplification', s);
  assert.ok(s.policies.hedgesSent! > 0, JSON.stringify(s.policies));
  assert.equal(
    events.filter((e) => e['e'] === 'attempt' && e['hedge'] === true).length,
    s.policies.hedgesSent,
  );
  assert.ok(s.policies.cancelledAttempts > 0);
  // Once everything is slow, nearly every origin sends its hedge: attempts about double.
  // After the trigger: client amplification (attempts / origins; no retries, so the
  // excess over 1 is hedges) at least 1.8, and hedges at least 0.8 per origin offered.
  assert.ok(s.afterTrigger.amplification! >= 1.8, `amplification ${s.afterTrigger.amplification}`);
  const t = column(csv, 't_s').map(Number);
  const after = (name: string): number =>
    column(csv, name).reduce((a, v, i) => a + (t[i]! >= Math.ceil(s.trigger.endS) ? Number(v || 0) : 0), 0);
  assert.ok(
    after('hedges') >= 0.8 * after('offered'),
    `${after('hedges')} hedges for ${after('offered')} origins after the trigger`,
  );
});
