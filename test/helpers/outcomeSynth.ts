import { Recorder } from '../../bench/record/Recorder.js';
import type { ServerSeries } from '../../orchestrator/scrape/scraper.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { planRun, type RunPlan } from '../../orchestrator/spec/plan.js';
import { summarizeRun, type RunSummary, type TriggerRecord } from '../../orchestrator/analysis/summary.js';

/**
 * Synthetic runs through the whole analysis (Recorder → summarizeRun): retry-storm's
 * schedule at a given scale, `rate` origins a second spread evenly, each second's share
 * of successes and attempts per origin given by functions of the second.
 */
const YAML = (observe: string, hypothesis: string) => `
name: synthetic
lab: { api: { workers: 8, work: { dist: exponential, mean: 20ms } } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 500ms, retry: { policy: immediate, maxAttempts: 4 } }
${hypothesis}
schedule:
  warmup: 10s
  baseline: 30s
  trigger: { kind: pause, target: api, duration: 10s }
  observe: ${observe}
recovery: { within: 5x, tolerance: 10%, window: 5s, hold: 10s }
`;

export interface Synth {
  scale?: number;
  /** The hypothesis line of the file (default: goodput >= 95% offered); '' declares none. */
  hypothesis?: string;
  observe?: string;
  /** Share of the second's origins that succeed (by second). */
  good: (s: number) => number;
  /** Attempts per origin (by second). */
  amp?: (s: number) => number;
  lagMs?: number;
  trigger?: Partial<TriggerRecord> | null;
  /** Queue depth per second for a scraped server. */
  backlog?: (s: number) => number;
  generatorCpu?: (s: number) => number;
  /** Each origin's response time in that second, ms (default 5). */
  latencyMs?: (s: number) => number;
}

export function synth(x: Synth): { plan: RunPlan; s: RunSummary } {
  const e = parseExperiment(
    YAML(x.observe ?? '120s', x.hypothesis ?? "hypothesis: { goodput: '>= 95% offered' }"),
    'synthetic.yaml',
  );
  const plan = planRun(e, { scale: x.scale ?? 1, run: 1 });
  const p = plan.phases;
  const rec = new Recorder({
    windows: [
      { name: 'baseline', ...p.baseline },
      { name: 'afterTrigger', startMs: p.trigger.endMs, endMs: p.observe.endMs },
    ],
    retainFromMs: p.baseline.startMs,
  });
  const seconds = Math.round(plan.totalMs / 1000);
  let id = 0;
  for (let sec = 0; sec < seconds; sec++) {
    const n = 100;
    const ok = Math.round(n * x.good(sec));
    const amp = x.amp?.(sec) ?? 1;
    for (let k = 0; k < n; k++) {
      const o = { id: id++, intendedMs: sec * 1000 + k * 10, deadlineMs: Infinity };
      rec.offered(o);
      const sentMs = o.intendedMs + (x.lagMs ?? 0);
      const ms = x.latencyMs?.(sec) ?? 5;
      const tries = Math.max(1, Math.round(amp));
      const success = k < ok;
      for (let t = 1; t <= tries; t++) {
        const last = t === tries;
        rec.attempt(
          { origin: o, number: t },
          { kind: last && success ? 'ok' : 'timeout', status: 0, sentMs, endMs: sentMs + ms, attempt: t },
        );
      }
      rec.outcome(o, {
        kind: success ? 'ok' : 'timeout',
        status: 0,
        sentMs,
        endMs: sentMs + ms,
        attempt: tries,
      });
    }
    rec.tick((sec + 1) * 1000);
  }
  const recorded = rec.close();
  const trig: TriggerRecord = {
    kind: 'pause',
    target: 'api',
    describe: 'pause api',
    plannedStartMs: p.trigger.startMs,
    startMs: p.trigger.startMs + 3,
    endMs: p.trigger.endMs,
    ...(x.trigger ?? {}),
  };
  const nulls = Array.from({ length: seconds }, () => null);
  const server: ServerSeries | null = x.backlog
    ? {
        received: nulls,
        span: nulls,
        completed: nulls,
        wasted: nulls,
        cpuSeconds: nulls,
        busyWorkers: nulls,
        rssBytes: nulls,
        queueDepth: Array.from({ length: seconds }, (_, i) => x.backlog!(i)),
      }
    : null;
  const s = summarizeRun({
    plan,
    runtime: 'local',
    recorded,
    server,
    triggers: x.trigger === null ? [] : [trig],
    ...(x.generatorCpu
      ? { generatorCpu: Array.from({ length: seconds }, (_, i) => x.generatorCpu!(i)) }
      : {}),
    interrupted: false,
  });
  return { plan, s };
}
