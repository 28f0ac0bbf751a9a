import { lineSink, type EventSink } from '../../bench/record/eventSink.js';
import type { RunPlan } from '../spec/plan.js';
import { nearestRank } from './percentiles.js';
import { round } from '../../foundation/round.js';

/**
 * Per request class and per phase: what each class of the workload mix got (a list read
 * and a streamed chat turn are not the same request, seeds/002). Built from
 * the run's attempt and outcome events. A description only: a class's thresholds are
 * hypothesis.classes, judged with every other threshold (analysis/summary.ts).
 *
 * An origin belongs to the window its intended time falls in (what was offered then).
 * Response times are over successful origins only; an origin the user cancelled on
 * purpose (`abandoned`: a stream stopped after N tokens) is neither a success nor an
 * error. TTFT and ITL are the client's, of each successful origin's final attempt:
 */
export const STREAM_DEFINITIONS =
  'TTFT: from sending the attempt to the first chunk with non-empty content (the role chunk does not count). ' +
  "ITL: (last token − first token) / (tokens − 1), GuideLLM's ITL (vLLM calls it TPOT), the first token excluded; one per attempt.";

export interface ClassWindow {
  readonly origins: number;
  readonly ok: number;
  /** Not ok and not cancelled by the user. */
  readonly failed: number;
  /** Streams the user cancelled on purpose (load.mix[].cancel). */
  readonly cancelled: number;
  /** failed / (origins − cancelled); null with no such origins. */
  readonly errorRatio: number | null;
  readonly failures: Record<string, number>;
  readonly responseMs: Percentiles;
  readonly ttftMs: Percentiles;
  readonly itlMs: Percentiles;
}

export interface Percentiles {
  readonly samples: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
}

export interface ClassReport {
  readonly name: string;
  readonly windows: Readonly<Record<WindowName, ClassWindow>>;
}

export interface ClassesSummary {
  readonly definitions: string;
  readonly classes: readonly ClassReport[];
}

export const WINDOWS = ['warmup', 'baseline', 'trigger', 'observe'] as const;
export type WindowName = (typeof WINDOWS)[number];

/** The events this needs (events.ndjson lines). */
export type ClassEvent =
  | {
      e: 'attempt';
      origin: number;
      cls?: number;
      kind: string;
      ttftMs?: number;
      itlMs?: number;
      n: number;
    }
  | { e: 'outcome'; origin: number; intendedMs: number; endMs: number; kind: string }
  | { e: string };

interface Acc {
  origins: number;
  ok: number;
  failed: number;
  cancelled: number;
  failures: Record<string, number>;
  response: number[];
  ttft: number[];
  itl: number[];
}

/** The summary from parsed events; `windows` are the run's phases (ms since run start). */
export function summarizeClasses(
  events: Iterable<ClassEvent>,
  classes: readonly { readonly name: string }[],
  windows: Readonly<Record<WindowName, { startMs: number; endMs: number }>>,
): ClassesSummary {
  const clsOf = new Map<number, number>();
  const stream = new Map<number, { ttftMs?: number; itlMs?: number }>();
  const outcomes: { origin: number; intendedMs: number; endMs: number; kind: string }[] = [];
  for (const ev of events) {
    if (ev.e === 'attempt') {
      const a = ev as Extract<ClassEvent, { e: 'attempt' }>;
      if (a.cls !== undefined) clsOf.set(a.origin, a.cls);
      // The successful attempt's stream timing is the origin's.
      if (a.kind === 'ok' && (a.ttftMs !== undefined || a.itlMs !== undefined))
        stream.set(a.origin, {
          ...(a.ttftMs !== undefined ? { ttftMs: a.ttftMs } : {}),
          ...(a.itlMs !== undefined ? { itlMs: a.itlMs } : {}),
        });
    } else if (ev.e === 'outcome') outcomes.push(ev as Extract<ClassEvent, { e: 'outcome' }>);
  }
  const acc = classes.map(() =>
    Object.fromEntries(
      WINDOWS.map((w) => [
        w,
        { origins: 0, ok: 0, failed: 0, cancelled: 0, failures: {}, response: [], ttft: [], itl: [] } as Acc,
      ]),
    ),
  ) as Record<WindowName, Acc>[];
  for (const o of outcomes) {
    const c = classes.length === 1 ? 0 : clsOf.get(o.origin);
    if (c === undefined || !acc[c]) continue;
    const w = WINDOWS.find((n) => o.intendedMs >= windows[n].startMs && o.intendedMs < windows[n].endMs);
    if (!w) continue;
    const a = acc[c][w];
    a.origins++;
    if (o.kind === 'ok') {
      a.ok++;
      a.response.push(o.endMs - o.intendedMs);
      const s = stream.get(o.origin);
      if (s?.ttftMs !== undefined) a.ttft.push(s.ttftMs);
      if (s?.itlMs !== undefined) a.itl.push(s.itlMs);
    } else if (o.kind === 'abandoned') a.cancelled++;
    else {
      a.failed++;
      a.failures[o.kind] = (a.failures[o.kind] ?? 0) + 1;
    }
  }
  return {
    definitions: STREAM_DEFINITIONS,
    classes: classes.map((spec, i): ClassReport => ({
      name: spec.name,
      windows: Object.fromEntries(WINDOWS.map((w) => [w, close(acc[i]![w])])) as Record<
        WindowName,
        ClassWindow
      >,
    })),
  };
}

function close(a: Acc): ClassWindow {
  const denom = a.origins - a.cancelled;
  return {
    origins: a.origins,
    ok: a.ok,
    failed: a.failed,
    cancelled: a.cancelled,
    errorRatio: denom > 0 ? a.failed / denom : null,
    failures: a.failures,
    responseMs: percentiles(a.response),
    ttftMs: percentiles(a.ttft),
    itlMs: percentiles(a.itl),
  };
}

function percentiles(xs: number[]): Percentiles {
  xs.sort((x, y) => x - y);
  const at = (p: number): number | null => {
    const v = nearestRank(xs, p);
    return v === null ? null : round(v, 3);
  };
  return { samples: xs.length, p50: at(50), p95: at(95), p99: at(99) };
}

/**
 * Collects, during the run, the events the class summary needs (attempts and outcomes),
 * whatever the event log keeps (`--events failures` or `none` would leave the successes
 * out); null without a mix. `summary()` then summarizes them for the plan's classes.
 */
export function classCollector(plan: RunPlan): { sink: EventSink; summary: () => ClassesSummary } | null {
  const mix = plan.experiment.load.mix;
  if (!mix) return null;
  const events: ClassEvent[] = [];
  const p = plan.phases;
  return {
    sink: lineSink((e) => {
      const k = (e as { e?: unknown }).e;
      if (k === 'attempt' || k === 'outcome') events.push(e as ClassEvent);
    }),
    summary: () =>
      summarizeClasses(
        events,
        mix.map((c) => ({ name: c.name })),
        { warmup: p.warmup, baseline: p.baseline, trigger: p.trigger, observe: p.observe },
      ),
  };
}

/** Upstream (platform → provider) amplification per bucket: attempts / calls begun; null without calls. */
export function upstreamAmplification(
  extra: Record<string, (number | null)[]> | undefined,
): (number | null)[] | null {
  const calls = extra?.['llm_calls'];
  const attempts = extra?.['llm_attempts'];
  if (!calls || !attempts) return null;
  return calls.map((c, i) => {
    const a = attempts[i];
    return c === null || a === null || a === undefined || c === 0 ? null : round(a / c, 3);
  });
}
