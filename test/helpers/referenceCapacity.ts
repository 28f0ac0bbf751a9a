import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { parsePrometheusText, type Samples } from '../../orchestrator/scrape/prometheusText.js';
import { runLoad, type LoadOptions, type LoadReport } from '../../orchestrator/loadtest/runLoad.js';

/**
 * How the reference labs' tests measure a server's capacity (issue 34, point 3), shared by
 * the local runtime's (test/integration/reference-labs.test.ts) and the Docker images'
 * (test/integration/reference-images.test.ts): the bench's open-loop load above capacity,
 * completions per second counted by the server itself.
 */

/** The bench's server-side series (orchestrator/scrape/scraper.ts reads them), which every reference server exports. */
export const SERIES = [
  'api_requests_received_total',
  'api_requests_completed_total',
  'api_queue_depth',
  'api_busy_workers',
] as const;

/** What the measurement needs of a server: where the load goes, and its series in Prometheus text. */
export interface MeasuredServer {
  readonly url: string;
  scrapeText(timeoutMs?: number): Promise<string>;
}

export async function scrape(s: MeasuredServer): Promise<Samples> {
  return parsePrometheusText(await s.scrapeText(2000));
}

export interface Capacity {
  /** Completions per second between two scrapes while the pool was saturated (server side). */
  readonly serverPerS: number;
  /**
   * Origins that succeeded / (sending time + the longest response time): the client's
   * rougher view (it takes the slowest response for the last), reported, not asserted.
   */
  readonly clientPerS: number;
  readonly load: LoadReport;
  readonly maxQueue: number;
  readonly maxBusy: number;
  /** Requests the server counted as received while the load ran (its counter's increase). */
  readonly received: number;
}

/**
 * Offers 1.5 × `predictedPerS` for `durationMs` (constant arrivals, no retries, a timeout
 * long enough that every request is served): the pool is saturated from the first second,
 * so what it completes per second is its capacity. The server's completed counter is read
 * every 250 ms, from 2 s to the end of sending. First 3 s at half the predicted capacity
 * warm the server (a JVM compiles its hot code in its first seconds; on a busy machine that
 * costs the pool's threads CPU), as calibrate's steps settle.
 */
export async function measureCapacity(
  s: MeasuredServer,
  predictedPerS: number,
  durationMs = 8000,
): Promise<Capacity> {
  const loadAt = (ratePerS: number, ms: number): LoadOptions => ({
    url: s.url,
    ratePerS,
    durationMs: ms,
    arrival: 'constant',
    timeoutMs: 30_000,
    retry: 'none',
    maxAttempts: 1,
    seed: 34,
    connections: 1024,
  });
  await runLoad({ ...loadAt(0.5 * predictedPerS, 3000), warmUp: false });
  const before = await scrape(s);
  let maxQueue = 0;
  let maxBusy = 0;
  const marks: { t: number; completed: number }[] = [];
  const done = { v: false };
  const t0 = performance.now() + 1200; // runLoad warms up for 1.2 s against its own sink first
  const poll = (async () => {
    while (!done.v) {
      const m = await scrape(s).catch(() => undefined);
      if (m) {
        const t = performance.now() - t0;
        maxQueue = Math.max(maxQueue, m.get('api_queue_depth') ?? 0);
        maxBusy = Math.max(maxBusy, m.get('api_busy_workers') ?? 0);
        if (t >= 2000 && t <= durationMs)
          marks.push({ t, completed: m.get('api_requests_completed_total')! });
      }
      await sleep(250);
    }
  })();
  const load = await runLoad(loadAt(1.5 * predictedPerS, durationMs));
  done.v = true;
  await poll;
  const after = await scrape(s);
  assert.ok(marks.length >= 2, `scrapes while saturated: ${marks.length}`);
  const first = marks[0]!;
  const last = marks[marks.length - 1]!;
  const serverPerS = (last.completed - first.completed) / ((last.t - first.t) / 1000);
  // FIFO queues: the last origin intended is about the last completed, at sending's end plus its response time.
  const clientPerS = (load.success * load.requests) / (load.durationS + load.response.max! / 1000);
  const received = after.get('api_requests_received_total')! - before.get('api_requests_received_total')!;
  return { serverPerS, clientPerS, load, maxQueue, maxBusy, received };
}

export const within10 = (measured: number, predicted: number): boolean =>
  Math.abs(measured - predicted) / predicted <= 0.1;

/** One line for the test's log: the measured figures beside the predicted. */
export function describeCapacity(what: string, predictedPerS: number, cap: Capacity): string {
  return (
    `${what}: predicted ${predictedPerS}/s, measured ${cap.serverPerS.toFixed(1)}/s server-side, ` +
    `${cap.clientPerS.toFixed(1)}/s client-side (${cap.load.requests} requests, success ${cap.load.success}, ` +
    `response max ${cap.load.response.max} ms, queue up to ${cap.maxQueue}, busy up to ${cap.maxBusy})`
  );
}

/**
 * The series at rest after a measurement: nothing busy or waiting (php-fpm's queue is sampled
 * by its master about once a second, so it is read until it settles), and everything
 * received completed.
 */
export async function assertAtRest(s: MeasuredServer, what: string): Promise<void> {
  let end = await scrape(s);
  for (let i = 0; i < 20 && end.get('api_queue_depth') !== 0; i++) {
    await sleep(200);
    end = await scrape(s);
  }
  assert.equal(end.get('api_queue_depth'), 0, `${what}: queue empty at rest`);
  assert.equal(end.get('api_busy_workers'), 0, `${what}: no worker busy at rest`);
  assert.equal(
    end.get('api_requests_completed_total'),
    end.get('api_requests_received_total'),
    `${what}: all received requests completed`,
  );
}
