import type { OutcomeKind } from '../../bench/outcome.js';
import type { StreamTiming } from '../../bench/transport/sse.js';
import type { AttemptResult, Origin } from '../../bench/outcome.js';
import { Recorder, type RecordWindow } from '../../bench/record/Recorder.js';
import type { RunPlan } from '../../orchestrator/spec/plan.js';
import { summarizeRun, type RunSummary } from '../../orchestrator/analysis/summary.js';

/** How a synthetic origin's one attempt ended, and after how long. */
export interface SyntheticAnswer {
  readonly cls: number;
  readonly kind: OutcomeKind;
  readonly ms: number;
  readonly stream?: StreamTiming;
}

/**
 * A run fed straight into a Recorder and the whole analysis (summarizeRun): one origin every
 * 100 ms over the plan, each with one attempt answered as `answer(i, t)` says, its events
 * delivered in completion order; the trigger is a pause of the api from 12 to 14 s.
 */
export function syntheticRun(
  plan: RunPlan,
  opts: {
    readonly classes: readonly string[];
    readonly windows: readonly RecordWindow[];
    readonly answer: (i: number, tMs: number) => SyntheticAnswer;
  },
): RunSummary {
  const rec = new Recorder({
    windows: opts.windows,
    classes: opts.classes,
    retainFromMs: plan.phases.baseline.startMs,
  });
  const events: { at: number; f: () => void }[] = [];
  for (let i = 0; i < plan.totalMs / 100; i++) {
    const t = i * 100;
    const a = opts.answer(i, t);
    const o: Origin = {
      id: i,
      intendedMs: t,
      deadlineMs: Infinity,
      request: { cls: a.cls, method: 'GET', path: '/work', body: undefined, key: undefined },
    };
    rec.offered(o);
    const r: AttemptResult = {
      kind: a.kind,
      status: a.kind === 'ok' ? 200 : 0,
      sentMs: t,
      endMs: t + a.ms,
      attempt: 1,
      ...(a.stream ? { stream: a.stream } : {}),
    };
    events.push({
      at: t + a.ms,
      f: () => {
        rec.attempt({ origin: o, number: 1 }, r);
        rec.outcome(o, r);
      },
    });
  }
  events.sort((a, b) => a.at - b.at).forEach((x) => x.f());
  rec.tick(plan.totalMs + 3000);
  return summarizeRun({
    plan,
    runtime: 'local',
    recorded: rec.close(),
    server: null,
    triggers: [{ kind: 'pause', target: 'api', startMs: 12_000, endMs: 14_000 }],
    interrupted: false,
  });
}
