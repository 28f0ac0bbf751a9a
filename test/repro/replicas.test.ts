import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { readEvents, runScaled } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';

// The reproduction suite, replicas and load balancing (issue 19): replica-failover and
// lb-herding with their contrasts at the suite's scale, asserting what their catalogue
// rows claim (experiments/README.md). runScaled also runs each one's simulated twin,
// which must reach the same outcome class (the balancer is the same code in both).

/** One attempt of events.ndjson: its origin, try number, replica, kind and send time. */
interface Attempt {
  readonly origin: number;
  readonly n: number;
  readonly replica: number;
  readonly kind: string;
  readonly sentS: number;
}

function attempts(out: string): Attempt[] {
  return readEvents(out)
    .filter((e) => e['e'] === 'attempt')
    .map((e) => ({
      origin: e['origin'] as number,
      n: e['n'] as number,
      replica: e['replica'] as number,
      kind: e['kind'] as string,
      sentS: (e['sentMs'] as number) / 1000,
    }));
}

/** The attempts sent while the (only) trigger acted, and those sent before it. */
function byPhase(s: RunSummary, all: Attempt[]): { before: Attempt[]; during: Attempt[] } {
  const t = s.triggers[0]!;
  return {
    before: all.filter((a) => a.sentS < t.startS),
    during: all.filter((a) => a.sentS >= t.startS && a.sentS < t.endS),
  };
}

/** Each replica's share of these attempts (0..1), replicas 0..n-1. */
function shares(xs: readonly Attempt[], n: number): number[] {
  const c = new Array<number>(n).fill(0);
  for (const a of xs) c[a.replica]!++;
  return c.map((k) => k / xs.length);
}

/** The fraction of a client's attempts sent to the replica its previous attempt went to (K clients, origins dealt round-robin). */
function persistence(xs: readonly Attempt[], K: number): number {
  const last = new Map<number, number>();
  let same = 0;
  let n = 0;
  for (const a of [...xs].sort((x, y) => x.sentS - y.sentS)) {
    const c = a.origin % K;
    const r = last.get(c);
    if (r !== undefined) {
      n++;
      if (r === a.replica) same++;
    }
    last.set(c, a.replica);
  }
  return same / n;
}

const pct = (xs: readonly number[]): string => xs.map((x) => `${(100 * x).toFixed(1)}%`).join(' / ');

describe('reproduction suite: replicas and load balancing', () => {
  test('replica-failover is metastable: retries on another replica push the paused replica’s load onto the survivors, above capacity', async () => {
    const { s, out } = await runScaled('experiments/replica-failover.yaml');
    assertClaimed('replica-failover', s);
    const base = s.baseline.goodputPerS!;
    const after = s.afterTrigger.goodputPerS!;
    assert.ok(after < 0.25 * base, `goodput ${after}/s after the trigger, ${base}/s in the baseline`);
    assert.ok(s.afterTrigger.amplification! >= 2, `amplification ${s.afterTrigger.amplification}`);
    // The sustaining effect: the replicas together receive more than their capacity.
    const m = /the api receives ([\d.]+)\/s against a capacity of 150\/s/.exec(s.sustainingEffect ?? '');
    assert.ok(m && Number(m[1]) > 150, `sustained by ${s.sustainingEffect}`);
    const all = attempts(out);
    const { during } = byPhase(s, all);
    // The paused replica answers nothing; the survivors receive its load through the retries.
    assert.equal(during.filter((a) => a.replica === 1 && a.kind === 'ok').length, 0);
    // retry.otherReplica: no retry goes where the try it retries failed.
    const prev = new Map<string, number>(all.map((a) => [`${a.origin}/${a.n}`, a.replica]));
    const retries = all.filter((a) => a.n > 1);
    assert.ok(retries.length > 0);
    for (const a of retries)
      assert.notEqual(a.replica, prev.get(`${a.origin}/${a.n - 1}`), `origin ${a.origin} try ${a.n}`);
  });

  test('replica-failover-no-retry recovers: the paused replica’s origins fail, the survivors stay under capacity', async () => {
    const { s, out } = await runScaled('experiments/replica-failover-no-retry.yaml');
    assertClaimed('replica-failover-no-retry', s);
    assert.equal(s.afterTrigger.amplification, 1, `amplification ${s.afterTrigger.amplification}`);
    const { during } = byPhase(s, attempts(out));
    assert.equal(during.filter((a) => a.replica === 1 && a.kind === 'ok').length, 0);
    // Round-robin keeps sending api[1] its third; the survivors serve theirs.
    const survivors = during.filter((a) => a.replica !== 1);
    const ok = survivors.filter((a) => a.kind === 'ok').length;
    assert.ok(ok >= 0.95 * survivors.length, `survivors served ${ok} of ${survivors.length}`);
  });

  test('lb-herding: least-latency keeps every client on the killed replica (a refusal looks fastest), p2c spreads them; both recover', async () => {
    const ll = await runScaled('experiments/lb-herding.yaml');
    const p2c = await runScaled('experiments/lb-herding-p2c.yaml');
    assertClaimed('lb-herding', ll.s);
    assertClaimed('lb-herding-p2c', p2c.s);
    const K = 50; // client.instances; origins are dealt to them round-robin
    const runs = { 'least-latency': ll, p2c } as const;
    const phases = Object.fromEntries(
      Object.entries(runs).map(([k, r]) => [k, byPhase(r.s, attempts(r.out))]),
    ) as Record<keyof typeof runs, ReturnType<typeof byPhase>>;
    for (const [k, p] of Object.entries(phases)) {
      // Killed: no attempt on api[2] succeeds, and nearly all are refused at once (one
      // sent in the first milliseconds may still meet the process and be reset).
      const on2 = p.during.filter((a) => a.replica === 2);
      const refused = on2.filter((a) => a.kind === 'conn-refused').length;
      assert.ok(on2.length > 0 && on2.every((a) => a.kind !== 'ok'), `${k}: ${on2.length} on api[2]`);
      assert.ok(refused >= 0.9 * on2.length, `${k}: ${refused} of ${on2.length} refused`);
    }
    // Before the kill, least-latency already herds: each client keeps to the replica that
    // looked fastest, so its next attempt nearly always goes where its last one went;
    // p2c's draw sends it to the same replica about a third of the time.
    const llStay = persistence(phases['least-latency'].before, K);
    const p2cStay = persistence(phases.p2c.before, K);
    assert.ok(llStay > 0.7, `least-latency: ${pct([llStay])} of attempts where the client's last went`);
    assert.ok(p2cStay < 0.45, `p2c: ${pct([p2cStay])} of attempts where the client's last went`);
    // During the kill, a client once refused by api[2] sends it every later attempt under
    // least-latency (the refusal lowered its average below the others'); under p2c a
    // refusal does not steer the next draw.
    const stuck = (p: ReturnType<typeof byPhase>): { on: number; stayed: number } => {
      const byClient = new Map<number, Attempt[]>();
      for (const a of [...p.during].sort((x, y) => x.sentS - y.sentS))
        byClient.set(a.origin % K, [...(byClient.get(a.origin % K) ?? []), a]);
      let on = 0;
      let stayed = 0;
      for (const xs of byClient.values()) {
        const i = xs.findIndex((a) => a.kind === 'conn-refused');
        if (i < 0 || i === xs.length - 1) continue;
        on++;
        if (xs.slice(i + 1).every((a) => a.replica === 2)) stayed++;
      }
      return { on, stayed };
    };
    const llStuck = stuck(phases['least-latency']);
    const p2cStuck = stuck(phases.p2c);
    assert.ok(llStuck.on >= 5, `least-latency: ${llStuck.on} clients refused with attempts after`);
    assert.equal(llStuck.stayed, llStuck.on, `least-latency: ${llStuck.stayed} of ${llStuck.on} stayed`);
    assert.ok(p2cStuck.stayed <= 0.6 * p2cStuck.on, `p2c: ${p2cStuck.stayed} of ${p2cStuck.on} stayed`);
    // So the killed replica keeps its share of the attempts under least-latency (its herd),
    // and loses none of it to the others.
    const before2 = shares(phases['least-latency'].before, 3)[2]!;
    const during2 = shares(phases['least-latency'].during, 3)[2]!;
    assert.ok(
      during2 >= before2 - 0.05,
      `api[2]: ${pct([before2])} before the kill, ${pct([during2])} during it`,
    );
  });
});
