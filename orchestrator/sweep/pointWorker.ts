import { parentPort, workerData } from 'node:worker_threads';
import { isBenchError } from '../../foundation/errors.js';
import type { Experiment } from '../spec/schema.js';
import { runExperiment, type RunOptions } from '../run/runExperiment.js';

/**
 * One simulated sweep point in a worker thread (sweep --jobs): the same runExperiment as a
 * serial sweep, so its folder is the same, byte for byte apart from the manifest's times.
 * Plain data in and out; the parent's stop reaches it as a message.
 */
export interface PointJob {
  readonly experiment: Experiment;
  readonly options: Omit<RunOptions, 'stop' | 'lab' | 'planned'>;
}

export type PointJobResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code?: string; readonly message: string; readonly hint?: string };

/**
 * The body of a point's worker thread: the thread's entry (in the composition root, which
 * registers the runtimes first) calls it once.
 */
export function servePointJob(): void {
  const job = workerData as PointJob;
  const stop = new AbortController();
  parentPort!.on('message', (m: unknown) => {
    if (m === 'stop') stop.abort();
  });
  runExperiment(job.experiment, { ...job.options, stop: stop.signal }).then(
    () => parentPort!.postMessage({ ok: true } satisfies PointJobResult),
    (err: unknown) =>
      parentPort!.postMessage(
        (isBenchError(err)
          ? { ok: false, code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) }
          : {
              ok: false,
              message: err instanceof Error ? (err.stack ?? err.message) : String(err),
            }) satisfies PointJobResult,
      ),
  );
}
