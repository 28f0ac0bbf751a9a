import { Worker } from 'node:worker_threads';
import { BenchError, type BenchErrorCode } from '../../foundation/errors.js';
import type { PointJob, PointJobResult } from './pointWorker.js';

/**
 * Runs `items` on at most `jobs` worker threads at once, one thread per item (a simulated
 * point runs for seconds: a thread's start-up is small beside it, and a fresh heap per
 * point keeps one collapsed point's memory from the next). `done` is called in the parent
 * as each item completes, in completion order. A stop is passed on to the running threads,
 * which end their runs as a serial sweep would, and starts no more; the first failure
 * starts no more either and is thrown once the running ones end (their folders are whole).
 */
export async function inWorkers<T>(
  workerFile: URL,
  items: readonly T[],
  jobs: number,
  jobOf: (item: T) => PointJob,
  stop: AbortSignal,
  done: (item: T) => void,
): Promise<void> {
  const queue = [...items];
  const running = new Set<Worker>();
  let failure: Error | undefined;
  const onStop = (): void => {
    for (const w of running) w.postMessage('stop');
  };
  stop.addEventListener('abort', onStop, { once: true });
  const lane = async (): Promise<void> => {
    while (queue.length > 0 && !stop.aborted && !failure) {
      const item = queue.shift()!;
      const r = await runWorker(workerFile, jobOf(item), running);
      if (r.ok) done(item);
      else
        failure ??= r.code
          ? new BenchError(r.code as BenchErrorCode, r.message, r.hint)
          : new Error(r.message);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, lane));
  } finally {
    stop.removeEventListener('abort', onStop);
  }
  if (failure) throw failure;
}

function runWorker(workerFile: URL, job: PointJob, running: Set<Worker>): Promise<PointJobResult> {
  return new Promise((resolve) => {
    const w = new Worker(workerFile, { workerData: job });
    running.add(w);
    let result: PointJobResult | undefined;
    w.on('message', (m: PointJobResult) => {
      result = m;
      // Its folder is written; a handle left open in the thread must not keep the sweep waiting.
      void w.terminate();
    });
    w.on('error', (err) => (result ??= { ok: false, message: err.stack ?? err.message }));
    w.on('exit', (code) => {
      running.delete(w);
      resolve(result ?? { ok: false, message: `a sweep point's worker thread exited with code ${code}` });
    });
  });
}
