import { writeFileSync } from 'node:fs';
import { startSink } from './sink.js';
import * as hdr from 'hdr-histogram-js';
import { RealClock } from '../../foundation/clock.js';
import { drive, SEND_TICK_MS } from '../../bench/driver.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import { profiledArrivals } from '../../bench/arrival/profiled.js';
import type { FailureKind } from '../../bench/outcome.js';
import { FAILURE_KINDS } from '../../bench/outcome.js';
import { policyEnv, stack, viaTransport } from '../../bench/policy/ClientPolicy.js';
import { observe } from '../../bench/policy/observe.js';
import { retry } from '../../bench/policy/retry.js';
import { attemptTimeout } from '../../bench/policy/timeout.js';
import type { LatencySummary } from '../../bench/record/histogram.js';
import { Recorder } from '../../bench/record/Recorder.js';
import { seededRng } from '../../foundation/rng.js';
import { HttpTransport } from '../../bench/transport/http.js';
import { leanController } from '../../bench/leanAbort.js';
import { warmUpClock } from '../../foundation/waker.js';
import { MAX_DERIVED_CONNECTIONS } from '../spec/plan.js';
import { round } from '../../foundation/round.js';

export interface LoadOptions {
  readonly url: string;
  readonly ratePerS: number;
  readonly durationMs: number;
  readonly arrival: 'poisson' | 'constant';
  readonly timeoutMs: number;
  readonly retry: 'none' | 'immediate';
  readonly maxAttempts: number;
  readonly seed: number;
  /** Connection cap; derived from the rate and the timeout when absent. */
  readonly connections?: number | undefined;
  /** Write an HdrHistogram interval log (response times, one interval per second) here. */
  readonly hdrOut?: string | undefined;
  /**
   * Before the first send, run the same generator for half a second against a sink in
   * this process on 127.0.0.1 (default true), so that the measured schedule does not
   * start with cold code. Nothing of it reaches the target or the report.
   */
  readonly warmUp?: boolean;
  readonly stop?: AbortSignal;
}

/** What `metabench load --json` prints (times in ms). */
export interface LoadReport {
  readonly requests: number;
  readonly targetPerS: number;
  readonly ratePerS: number;
  readonly durationS: number;
  readonly success: number;
  readonly attempts: number;
  readonly response: LatencySummary;
  readonly service: LatencySummary;
  readonly omissionFactor: number | null;
  readonly lateSends: number;
  /** Late sends by second of intended time: a generator that lags only while it warms up shows it here. */
  readonly lateSendsBySecond: readonly number[];
  readonly scheduleLag: LatencySummary;
  readonly clientWait: LatencySummary;
  readonly errors: Partial<Record<FailureKind, number>>;
  readonly generator: { readonly cpuUserS: number; readonly cpuSystemS: number; readonly rssBytes: number };
}

/**
 * An open-loop, coordinated-omission-correct load against any HTTP endpoint: the same
 * engine as `metabench run` (arrivals → policies → transport → recorder) without a lab.
 * Response time counts from each request's intended time; service time from its send.
 */
export async function runLoad(o: LoadOptions): Promise<LoadReport> {
  await warmUpClock();
  if (o.warmUp !== false && !o.stop?.aborted) {
    const sink = await startSink();
    try {
      await measure({
        ...o,
        url: sink.url,
        durationMs: WARM_UP_MS,
        hdrOut: undefined,
        connections: undefined,
      });
    } finally {
      await sink.close();
    }
  }
  return measure(o);
}

/** Long enough to cross a second's boundary: the Recorder's per-second work warms too. */
const WARM_UP_MS = 1200;

async function measure(o: LoadOptions): Promise<LoadReport> {
  const url = new URL(o.url);
  const attempts = o.retry === 'none' ? 1 : o.maxAttempts;
  const connections =
    o.connections ??
    Math.min(
      MAX_DERIVED_CONNECTIONS,
      Math.max(64, Math.ceil(2 * o.ratePerS * attempts * (o.timeoutMs / 1000)) + 16),
    );
  // The transport times only durations (waits, idle spells), on a clock of its own: the
  // run's clock starts after the connections below are open, with the schedule, so that
  // the first sends are not already behind by the handshakes' milliseconds.
  const transport = new HttpTransport({
    url: url.origin,
    path: `${url.pathname}${url.search}`,
    connections,
    clock: new RealClock(),
  });
  // What a few milliseconds of the rate hold in flight, connected before the first send.
  await transport.prepare(Math.ceil(o.ratePerS * 0.005) + 8);
  const clock = new RealClock();
  const lines: string[] = [];
  const log = o.hdrOut ? new hdr.HistogramLogWriter((s) => lines.push(s)) : undefined;
  if (log) {
    log.outputLogFormatVersion();
    log.outputComment(
      `metabench load ${o.url} ${o.ratePerS}/s ${o.arrival} for ${o.durationMs / 1000} s; response time (from intended time), microseconds`,
    );
    log.outputStartTime(clock.originEpochMs);
    log.baseTime = clock.originEpochMs;
    log.outputLegend();
  }
  const recorder = new Recorder({
    windows: [{ name: 'all', startMs: 0, endMs: Number.POSITIVE_INFINITY }],
    ...(log
      ? {
          onBucketClosed: (b, h) => {
            h.startTimeStampMsec = clock.originEpochMs + b * 1000;
            h.endTimeStampMsec = clock.originEpochMs + (b + 1) * 1000;
            // Values are µs; a ratio of 1000 shows the interval max in ms, as HdrHistogram's tools expect.
            log.outputIntervalHistogram(h, undefined, undefined, 1000);
          },
        }
      : {}),
  });
  const dispatch = stack(
    [retry({ maxAttempts: attempts }), observe(recorder), attemptTimeout(o.timeoutMs)],
    viaTransport(transport, clock, { newController: leanController }),
    { ...policyEnv(clock, seededRng(o.seed, 'client')), newController: leanController },
  );
  const profile = new RateProfile([{ durationMs: o.durationMs, fromPerS: o.ratePerS, toPerS: o.ratePerS }]);
  const cpu0 = process.cpuUsage();
  try {
    await drive({
      clock,
      arrivals: profiledArrivals(profile, o.arrival, seededRng(o.seed, 'arrivals'), 'a flat rate'),
      dispatch,
      recorder,
      deadlineMs: Number.POSITIVE_INFINITY,
      drainMs: o.timeoutMs * attempts + 500,
      sendTickMs: SEND_TICK_MS,
      ...(o.stop ? { stop: o.stop } : {}),
    });
  } finally {
    await transport.close();
  }
  const cpu = process.cpuUsage(cpu0);
  const r = recorder.close();
  if (o.hdrOut) writeFileSync(o.hdrOut, lines.join(''));
  const all = r.windows['all']!;
  const t = r.totals;
  // The sending phase ends with the last first attempt: if the generator fell behind, it is longer than declared.
  const sendingS = Math.max(o.durationMs, t.lastFirstSendMs) / 1000;
  const errors: Partial<Record<FailureKind, number>> = {};
  for (const k of FAILURE_KINDS) if (t.outcomes[k] > 0) errors[k] = t.outcomes[k];
  const p99r = all.response.p99;
  const p99s = all.service.p99;
  return {
    requests: t.offered,
    targetPerS: o.ratePerS,
    ratePerS: round(t.offered / sendingS, 3),
    durationS: round(sendingS, 3),
    success: t.offered > 0 ? round(t.outcomes.ok / t.offered, 5) : 0,
    attempts: t.attempts,
    response: all.response,
    service: all.service,
    omissionFactor: p99r !== null && p99s !== null && p99s > 0 ? round(p99r / p99s, 3) : null,
    lateSends: t.lateSends,
    lateSendsBySecond: r.series.lateSends,
    scheduleLag: r.scheduleLag,
    clientWait: r.clientWait,
    errors,
    generator: {
      cpuUserS: round(cpu.user / 1e6, 3),
      cpuSystemS: round(cpu.system / 1e6, 3),
      rssBytes: process.memoryUsage().rss,
    },
  };
}

/** The human-readable report: like `vegeta report`, but measured from the intended time. */
export function formatLoadReport(r: LoadReport): string {
  const row = (name: string, l: LatencySummary): string =>
    `${name.padEnd(34)}${String(l.samples).padStart(9)}${[l.mean, l.p50, l.p90, l.p99, l.p999, l.max].map((v) => (v === null ? '–' : v.toFixed(2)).padStart(10)).join('')}`;
  const errs = Object.entries(r.errors);
  return [
    `requests      ${r.requests} in ${r.durationS} s: ${r.ratePerS}/s achieved (target ${r.targetPerS}/s), ${r.attempts} attempts`,
    `success       ${(r.success * 100).toFixed(2)}%`,
    `latency (ms)                         samples      mean       p50       p90       p99     p99.9       max`,
    row('response (from intended time)', r.response),
    row('service (from actual send)', r.service),
    `omission factor  ${r.omissionFactor ?? 'unmeasured'} (p99 response / p99 service)`,
    `late sends       ${r.lateSends} (${r.requests ? ((100 * r.lateSends) / r.requests).toFixed(3) : '0'}% sent > 1 ms after their intended time; schedule lag p99 ${r.scheduleLag.p99 ?? '–'} ms)`,
    ...(r.clientWait.samples > 0
      ? [
          `client wait      ${r.clientWait.samples} attempts waited for a connection (p99 ${r.clientWait.p99} ms): the open loop turned partly closed`,
        ]
      : []),
    `errors           ${errs.length ? errs.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`,
    '',
  ].join('\n');
}
