import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData, type ResourceLimits } from 'node:worker_threads';
import { BenchError, isBenchError, type BenchErrorCode } from './errors.js';

/**
 * Independent jobs on worker threads (sweep --jobs, model's map): plain data in and out. A
 * thread per lane, kept for all the jobs it takes: the modules load once, and the simulator's
 * code stays compiled from one job to the next (a thread per job made a map slower than
 * serial: every cell started cold).
 */

/**
 * A simulation thread's young generation, in MB (Worker's maxYoungGenerationSizeMb; the
 * main thread's is fixed when Node starts, and is smaller). An attempt of a simulated retry
 * storm lives half a second of simulated time, a few milliseconds of the thread's: with the
 * default, every scavenge of a collapse found about 45% of the young objects still alive
 * and copied them, and collection took 44% of its CPU. With this one a 600 s collapse at
 * 1,000 origins/s ran in 14.9 s against 28.7 s (one core; benchmarks/results/sim-*.md), for
 * about 100 MB more at its peak. Short runs gain nothing (a model map's cells: the same
 * time, 2026-12-02), hence orchestrator/run/onThread.ts's threshold.
 */
export const SIMULATION_YOUNG_GENERATION_MB = 192;
/** The resource limits of a simulation thread (inWorkers' last argument). */
export const SIMULATION_THREAD_LIMITS: ResourceLimits = {
  maxYoungGenerationSizeMb: SIMULATION_YOUNG_GENERATION_MB,
};

/** What a pool's thread is told as it starts (its workerData). */
interface LaneData {
  /** Threads the pool runs at once. */
  readonly lanes: number;
}

/**
 * Whether a helper thread (events.arrow's writer) may take a core beside this one: only on a
 * pool's thread (a simulation whose process's main thread waits), and only when the pool's
 * threads are fewer than the cores. On a busy core it only takes turns from the simulations
 * (sweep --jobs 2 on two cores). Never on the main thread: a lab run's generator is there,
 * its CPU measured each second against a limit (a writer thread starting up pushed it over,
 * retry-storm's lab run, 2026-12-07), and the lab's services have the other core.
 */
export function coreToSpare(): boolean {
  if (isMainThread) return false;
  const lanes = (workerData as Partial<LaneData> | null)?.lanes ?? 1;
  return availableParallelism() > lanes;
}

type JobResult<R> =
  | { readonly ok: true; readonly value: R }
  | { readonly ok: false; readonly code?: string; readonly message: string; readonly hint?: string };

/**
 * Runs a job per item on at most `jobs` threads at once (each `workerFile`, which calls
 * serveJobs, with `resourceLimits` if given). `done` gets each item's result in the parent, in completion order. A stop is
 * passed on to the running jobs, which end as they would in the parent, and starts no
 * more; the first failure starts no more either and is thrown once the running ones end.
 */
export async function inWorkers<T, J, R>(
  workerFile: URL,
  items: readonly T[],
  jobs: number,
  jobOf: (item: T) => J,
  stop: AbortSignal,
  done: (item: T, result: R) => void,
  resourceLimits?: ResourceLimits,
): Promise<void> {
  const queue = [...items];
  const running = new Set<Worker>();
  let failure: Error | undefined;
  const onStop = (): void => {
    for (const w of running) w.postMessage({ stop: true });
  };
  stop.addEventListener('abort', onStop, { once: true });
  const lanes = Math.max(1, Math.min(jobs, items.length));
  const lane = async (): Promise<void> => {
    const w = new Lane<R>(workerFile, { lanes }, resourceLimits);
    running.add(w.worker);
    try {
      while (queue.length > 0 && !stop.aborted && !failure) {
        const item = queue.shift()!;
        const r = await w.run(jobOf(item));
        if (r.ok) done(item, r.value);
        else
          failure ??= r.code
            ? new BenchError(r.code as BenchErrorCode, r.message, r.hint)
            : new Error(r.message);
      }
    } finally {
      running.delete(w.worker);
      await w.worker.terminate();
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    stop.removeEventListener('abort', onStop);
  }
  if (failure) throw failure;
}

/** One thread, one job at a time; a thread that dies fails the job it had. */
class Lane<R> {
  readonly worker: Worker;
  private waiting: ((r: JobResult<R>) => void) | undefined;
  private dead: JobResult<R> | undefined;

  constructor(workerFile: URL, data: LaneData, resourceLimits: ResourceLimits | undefined) {
    this.worker = new Worker(workerFile, { workerData: data, ...(resourceLimits ? { resourceLimits } : {}) });
    this.worker.on('message', (m: JobResult<R>) => this.settle(m));
    this.worker.on('error', (err) => (this.dead ??= { ok: false, message: err.stack ?? err.message }));
    this.worker.on('exit', (code) => {
      this.dead ??= { ok: false, message: `a worker thread exited with code ${code}` };
      this.settle(this.dead);
    });
  }

  run(job: unknown): Promise<JobResult<R>> {
    if (this.dead) return Promise.resolve(this.dead);
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.worker.postMessage({ job });
    });
  }

  private settle(r: JobResult<R>): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.(r);
  }
}

/** In a worker thread: runs each job it is sent, one at a time, and posts its result (a BenchError keeps its code and hint). */
export function serveJobs<J, R>(run: (job: J, stop: AbortSignal) => Promise<R>): void {
  let current: AbortController | undefined;
  parentPort!.on('message', (m: { job?: J; stop?: true }) => {
    if (m.stop) {
      current?.abort();
      return;
    }
    const stop = (current = new AbortController());
    run(m.job as J, stop.signal).then(
      (value) => parentPort!.postMessage({ ok: true, value } satisfies JobResult<R>),
      (err: unknown) =>
        parentPort!.postMessage(
          (isBenchError(err)
            ? { ok: false, code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) }
            : {
                ok: false,
                message: err instanceof Error ? (err.stack ?? err.message) : String(err),
              }) satisfies JobResult<R>,
        ),
    );
  });
}
