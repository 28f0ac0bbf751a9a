import type { WorkerPoolOptions } from './workerPool.js';
import { CodelShedder, QueueTimeShedder } from './shedding.js';
import type { QueueDiscipline } from './queue.js';

/*
 * The api's queueing options, apart from its express server: the simulated api (sim/api.ts)
 * uses the same, and loading them must not load express, ioredis and prom-client.
 */

export interface Mitigations {
  readonly queue?: QueueDiscipline;
  /** Bounded queue: at most this many waiting; more get 503 queue_full. */
  readonly queueBound?: number;
  /** Most requests admitted (waiting + running); more get 503 concurrency. */
  readonly concurrencyLimit?: number;
  /** Shed at pickup the requests that waited longer than this (503 queue_time). */
  readonly shedQueueTimeMs?: number;
  /** CoDel-style shedding on the minimum queueing delay over an interval (503 codel). */
  readonly codel?: { readonly targetMs: number; readonly intervalMs: number };
  /** Drop at pickup, without doing the work, requests whose propagated deadline (x-deadline-ms) passed (503 deadline). */
  readonly deadlineDrop?: boolean;
}

/** The listen backlog the api asks for (the simulated api's kernel keeps as many handshakes). */
export const LISTEN_BACKLOG = 511;

export function poolOptions(m: Mitigations = {}): WorkerPoolOptions {
  if (m.shedQueueTimeMs !== undefined && m.codel)
    throw new Error('choose one shedding policy: a queue-time limit or CoDel, not both');
  const shedder =
    m.shedQueueTimeMs !== undefined
      ? new QueueTimeShedder(m.shedQueueTimeMs)
      : m.codel
        ? new CodelShedder(m.codel.targetMs, m.codel.intervalMs)
        : undefined;
  return {
    ...(m.queue ? { queue: m.queue } : {}),
    ...(m.queueBound !== undefined ? { queueBound: m.queueBound } : {}),
    ...(m.concurrencyLimit !== undefined ? { concurrencyLimit: m.concurrencyLimit } : {}),
    ...(m.deadlineDrop ? { deadlineDrop: true } : {}),
    ...(shedder ? { shedder } : {}),
  };
}
