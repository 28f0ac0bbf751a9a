import type { DurationDist } from '../../foundation/distributions.js';
import { exponential } from '../../foundation/distributions.js';
import { seededRng } from '../../foundation/rng.js';
import type { QueueDiscipline } from '../../services/api/queue.js';
import { SimApi, type SimRequest } from '../../sim/api.js';
import { SimClock } from '../../sim/clock.js';

export interface QueueRunOptions {
  readonly workers: number;
  readonly work: DurationDist;
  /** Poisson arrivals, per ms. */
  readonly lambdaPerMs: number;
  /** Requests measured, after `warmup` requests that are not. */
  readonly n: number;
  readonly warmup: number;
  readonly seed: number;
  readonly queue?: QueueDiscipline;
}

export interface Estimate {
  readonly value: number;
  /** Standard error by batch means (20 batches): the run's own statistical precision. */
  readonly se: number;
}

export interface QueueRun {
  readonly meanWaitMs: Estimate;
  readonly pWait: Estimate;
  readonly meanSojournMs: Estimate;
  readonly events: number;
  readonly wallMs: number;
}

const BATCHES = 20;

/**
 * The simulated api alone (its WorkerPool and queue on the SimClock, through the same
 * SimApi the runs use) fed Poisson arrivals: the open queue the closed forms describe,
 * without the client stack around it (whose timeouts would cut the waits short).
 * Measures each request's queue wait (when a worker takes it) and sojourn (arrival to
 * answer), in arrival order for the sojourn and pickup order for the wait.
 */
export async function runQueue(o: QueueRunOptions): Promise<QueueRun> {
  const clock = new SimClock();
  const api = new SimApi(clock, {
    workers: o.workers,
    work: o.work,
    seed: o.seed,
    mitigations: { queue: o.queue ?? 'fifo' },
  });
  const total = o.n + o.warmup;
  const per = Math.ceil(o.n / BATCHES);
  const wait = new Float64Array(BATCHES);
  const waited = new Float64Array(BATCHES);
  const sojourn = new Float64Array(BATCHES);
  let picked = 0;
  api.observeQueueWait = (ms) => {
    const i = picked++ - o.warmup;
    if (i < 0 || i >= o.n) return;
    const b = Math.floor(i / per);
    wait[b]! += ms;
    if (ms > 0) waited[b]!++;
  };
  let answered = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const rng = seededRng(o.seed, 'queue-arrivals');
  let sent = 0;
  const request = (index: number, t0: number): SimRequest => ({
    route: '/work',
    cost: undefined,
    key: undefined,
    deadlineHeaderMs: undefined,
    gone: false,
    queued: undefined,
    answer: () => {
      const i = index - o.warmup;
      if (i >= 0 && i < o.n) sojourn[Math.floor(i / per)]! += clock.now() - t0;
      if (++answered === total) done();
    },
    reset: () => undefined,
    refuse: () => undefined,
    connectTimedOut: () => undefined,
  });
  const meanGap = 1 / o.lambdaPerMs;
  const arrive = (): void => {
    api.connect(request(sent, clock.now()), true);
    if (++sent < total) clock.timer(clock.now() + exponential(meanGap, rng), arrive);
  };
  clock.timer(0, arrive);
  // Wall time of the run, reported only.
  const t0 = performance.now();
  await clock.run(all);
  const wallMs = performance.now() - t0;
  const sizes = Array.from({ length: BATCHES }, (_, b) => Math.min(per, Math.max(0, o.n - b * per)));
  return {
    meanWaitMs: batchMeans(wait, sizes),
    pWait: batchMeans(waited, sizes),
    meanSojournMs: batchMeans(sojourn, sizes),
    events: clock.fired,
    wallMs,
  };
}

function batchMeans(sums: Float64Array, sizes: readonly number[]): Estimate {
  const means: number[] = [];
  let total = 0;
  let n = 0;
  sums.forEach((s, b) => {
    if (sizes[b]! > 0) means.push(s / sizes[b]!);
    total += s;
    n += sizes[b]!;
  });
  const value = total / n;
  const k = means.length;
  const v = means.reduce((a, m) => a + (m - value) ** 2, 0) / (k - 1);
  return { value, se: Math.sqrt(v / k) };
}
