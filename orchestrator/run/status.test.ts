import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Recorder, type BucketFigures } from '../../bench/record/Recorder.js';
import type { AttemptResult, Origin } from '../../bench/outcome.js';
import { seededRng } from '../../foundation/rng.js';
import { timeseriesCsv } from '../results/timeseries.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { describeSecond, lastSecond } from './status.js';

const plan = planRun(
  parseExperiment(
    `name: s
lab: { api: { workers: 4, work: { dist: constant, mean: 10ms } } }
load: { rate: 50/s }
client: { timeout: 400ms }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 1s }, observe: 2s }
recovery: { within: 3x, tolerance: 20%, window: 1s, hold: 1s }
`,
    's.yaml',
  ),
  { scale: 1, run: 1 },
);

/**
 * A run replayed on a Recorder in time order, as the driver, the policies and the status
 * tick call it: origins offered up to 40 ms late, attempts that wait for a connection,
 * last up to 450 ms and are retried once when they fail; the status reads the Recorder
 * at every second (a little late, as a timer does).
 */
function replay(seed: number): {
  shown: BucketFigures[];
  naive: BucketFigures[];
  csv: Map<number, Record<string, string>>;
} {
  const rng = seededRng(seed, 'status');
  const rec = new Recorder({});
  const events: { at: number; seq: number; run: () => void }[] = [];
  let seq = 0;
  const at = (t: number, run: () => void): void => void events.push({ at: t, seq: seq++, run });
  let nextTick = 1000;
  const driverTick = (now: number): void => {
    while (now >= nextTick) {
      rec.tick(nextTick);
      nextTick += 1000;
    }
  };
  let lag = 0;
  for (let t = 0, id = 0; ; id++) {
    t += -Math.log(1 - rng.next()) * 20; // Poisson, 50/s
    if (t >= 6000) break;
    lag = Math.max(0, Math.min(40, lag + (rng.next() - 0.5) * 20));
    const o: Origin = { id, intendedMs: t, deadlineMs: Infinity };
    const offerAt = t + lag;
    const attempt = (n: number, startAt: number): void =>
      at(startAt, () => {
        const token = rec.attemptStarted(startAt);
        const sentMs = startAt + (rng.next() < 0.2 ? rng.next() * 30 : 0);
        const endMs = sentMs + 5 + rng.next() * 445;
        const kind = endMs - sentMs > 300 ? 'timeout' : 'ok';
        const r: AttemptResult = { kind, status: kind === 'ok' ? 200 : 0, sentMs, endMs, attempt: n };
        at(endMs, () => {
          rec.attempt({ origin: o, number: n }, r, token);
          if (kind === 'timeout' && n === 1) attempt(2, endMs);
          else rec.outcome(o, r);
        });
      });
    at(offerAt, () => {
      driverTick(offerAt);
      rec.offered(o);
      attempt(1, offerAt);
    });
  }
  const shown: BucketFigures[] = [];
  const naive: BucketFigures[] = [];
  for (let n = 1; n <= 7; n++) {
    const t = n * 1000 + rng.next() * 20;
    at(t, () => {
      const s = lastSecond(rec);
      if (s) shown.push(s);
      naive.push(rec.figures(n - 1));
    });
  }
  // Time order; at equal times, in the order they were scheduled (as an event loop would).
  while (events.length > 0) {
    events.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const e = events.shift()!;
    e.run();
  }
  rec.tick(8000);
  const [head, ...rows] = timeseriesCsv(plan, rec.close(), null).trim().split('\n');
  const cols = head!.split(',');
  const csv = new Map(
    rows.map((r) => {
      const row = Object.fromEntries(r.split(',').map((v, i) => [cols[i]!, v]));
      return [Number(row['t_s']), row] as const;
    }),
  );
  return { shown, naive, csv };
}

/** Second t as timeseries.csv has it, in the status line's words. */
function fromCsv(row: Record<string, string>): string {
  const p99 = row['response_p99_ms'];
  return (
    `second ${row['t_s']}: offered ${row['offered']}  attempts ${row['attempts']}  goodput ${row['goodput']}  ` +
    `amp ${row['amplification_client'] || '–'}  p99 ${p99 ? `${p99} ms` : '–'}  in-flight ${row['in_flight']}`
  );
}

test('the status line shows the last complete second exactly as timeseries.csv has it (seeded replays)', () => {
  let naiveDiffers = 0;
  for (const seed of [1, 2, 3, 4, 5]) {
    const { shown, naive, csv } = replay(seed);
    assert.ok(shown.length >= 5, `seed ${seed}: ${shown.length} seconds shown`);
    for (const s of shown) assert.equal(describeSecond(s), fromCsv(csv.get(s.bucket)!), `seed ${seed}`);
    // Reading the previous second as soon as it ends would not do: its attempts are still out.
    naiveDiffers += naive.filter((s) => describeSecond(s) !== fromCsv(csv.get(s.bucket)!)).length;
  }
  assert.ok(naiveDiffers > 0);
});

test('a second is complete only once an origin after it was offered, its end was marked and its attempts ended', () => {
  const rec = new Recorder({});
  const o = (id: number, t: number): Origin => ({ id, intendedMs: t, deadlineMs: Infinity });
  rec.offered(o(0, 100));
  const token = rec.attemptStarted(120);
  rec.tick(1000);
  assert.equal(rec.lastCompleteBucket(), -1); // nothing intended after second 0 offered yet
  rec.offered(o(1, 1100));
  assert.equal(rec.lastCompleteBucket(), -1); // origin 0's attempt is still out
  const r: AttemptResult = { kind: 'ok', status: 200, sentMs: 120, endMs: 1150, attempt: 1 };
  rec.attempt({ origin: o(0, 100), number: 1 }, r, token);
  rec.outcome(o(0, 100), r);
  assert.equal(rec.lastCompleteBucket(), 0);
  assert.equal(
    describeSecond(lastSecond(rec)),
    'second 0: offered 1  attempts 1  goodput 0  amp 1  p99 –  in-flight 1',
  );
  // Marking second 0's end again (a driver's last tick) does not change what was shown.
  rec.tick(1000);
  assert.equal(rec.figures(0).inFlight, 1);
  assert.equal(describeSecond(null), 'second –: not complete yet');
});
