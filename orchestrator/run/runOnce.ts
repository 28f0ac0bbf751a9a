import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { drive } from '../../bench/driver.js';
import type { EventsMode } from '../../bench/record/eventLog.js';
import { nullSink, teeSink, type EventSink } from '../../bench/record/eventSink.js';
import { Recorder, type Recorded } from '../../bench/record/Recorder.js';
import { arrivalsFor } from './load.js';
import { driveClosed } from '../../bench/closedLoop.js';
import { seededRng } from '../../foundation/rng.js';
import { clientModel, policyPresence, worstOriginMs } from './client.js';
import { hasHypothesis, type RunSummary } from '../analysis/summary.js';
import { analyseRun, type RunRecord } from '../analysis/analyseRun.js';
import { classCollector, upstreamAmplification } from '../analysis/classes.js';
import type { ComposeOptions } from '../lab/dockerData.js';
import type { RunObservers, ObserveOptions } from '../live/observers.js';
import type { Lab } from '../lab/Lab.js';
import type { Runtime } from '../lab/runtimes.js';
import { provenance } from '../results/manifest.js';
import { writeJson } from '../results/files.js';
import { readRunRecord, writeRunRecord } from '../results/record.js';
import { timeseriesTable } from '../results/timeseries.js';
import { writeTimeseries } from '../results/timeseriesFiles.js';
import type { RunPlan } from '../spec/plan.js';
import type { Journal } from '../trigger/journal.js';
import { TriggerSchedule } from './triggers.js';
import type { StatusLine } from './status.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { runtimePlugin, type RunRuntime } from '../lab/RuntimePlugin.js';
import { runBody, type LabUpFacts } from './runBody.js';
import type { LatenessVerdict } from '../analysis/validity.js';
import type { PriorityMode } from '../lab/proc/priority.js';
import type { MachineState } from '../results/machineState.js';

export interface RunContext {
  /** Where faults and the lab's processes are recorded before they happen (the on-disk Journal, in a real run). */
  readonly journal: Pick<Journal, 'record' | 'clear'>;
  readonly status: StatusLine;
  /** Aborts when the user interrupts (Ctrl-C, SIGTERM): the run stops, undoes its faults and keeps what it measured. */
  readonly stop: AbortSignal;
  /** Extra facts for manifest.json (the command line, overrides). */
  readonly manifestExtra?: Record<string, unknown>;
  /** Where the run happens: the local lab (the default), the docker lab or the simulation. */
  readonly runtime?: Runtime;
  /** The docker runtime's compose project (default: the default project). */
  readonly docker?: ComposeOptions | undefined;
  /** The live /metrics server and Grafana annotations. */
  readonly observe?: ObserveOptions;
  /** The local runtime's CPU pinning (absent: pinned from 4 CPUs; true: --pin; false: --no-pin). */
  readonly pin?: boolean;
  /** Which events go to the event log (default all). */
  readonly events?: EventsMode;
  /** This run replays a lab run's lateness (run/replay.ts): keyed work draws, and `sendDelays` imposed when given. */
  readonly replay?: { readonly sendDelays?: ArrayLike<number> };
  /** Judges the recorded lateness (origin lags by id) for validity check 4: the lab's runs replay it (run/replay.ts). */
  readonly judgeLateness?: (lags: Float32Array) => Promise<LatenessVerdict>;
  /** The generator's scheduling priority in a real run (absent: high where permitted; lab/proc/priority.ts). */
  readonly priority?: PriorityMode;
}

/**
 * One run: start the lab, drive the open-loop load through the client policies, apply
 * and undo the trigger on schedule, read the service's series every second, then
 * write manifest.json, the event log (events.arrow, as ctx.events says), timeseries.csv, the run's record
 * (results/record.ts) and summary.json, its analysis, into `dir`.
 * Whatever happens, the trigger is undone and the lab stopped before this returns.
 * The local lab runs it in real time; the simulation (ctx.runtime 'sim') in virtual
 * time, with the same recorder, client policies, driver and triggers (lab/RuntimePlugin.ts).
 */
export async function runOnce(plan: RunPlan, dir: string, ctx: RunContext): Promise<RunSummary> {
  mkdirSync(dir, { recursive: true });
  const labEntry = `run-${plan.run}-lab`;
  const rt = runtimePlugin(ctx.runtime ?? 'local').run(plan, dir, {
    worstOriginMs: worstOriginMs(plan.experiment.client),
    // The lab's processes are journaled like a fault: a killed orchestrator leaves none behind.
    onProcessesChanged: () =>
      ctx.journal.record({
        id: labEntry,
        appliedAt: new Date().toISOString(),
        undo: rt.lab.teardownRecipe(),
      }),
    ...(ctx.docker ? { docker: ctx.docker } : {}),
    ...(ctx.pin !== undefined ? { pin: ctx.pin } : {}),
    ...(ctx.replay ? { keyedDraws: true } : {}),
  });
  const startedAt = new Date();
  const classes = classCollector(plan);
  // The event log's writers (and apache-arrow under them) load only for a run that keeps a log.
  const events = ctx.events ?? 'all';
  const openLog =
    events === 'none' ? () => nullSink : (await import('../../bench/record/eventLog.js')).eventSink;
  let manifest: Record<string, unknown> | undefined;
  const x = await executeRun(plan, rt, {
    ...ctx,
    labEntry,
    ...(needsObservers(ctx.observe)
      ? {
          observers: new (await import('../live/observers.js')).RunObservers(ctx.observe, rt.lab, (l) =>
            ctx.status.say(l),
          ),
        }
      : {}),
    onLabUp: (facts) => {
      const prov = provenance(startedAt, rt.lab);
      manifest = {
        ...prov,
        // The machine's description, and in a real run its load (its phases once the run is over).
        ...(facts.machine ? { machine: { ...prov.machine, ...facts.machine, phases: {} } } : {}),
        ...(facts.priority ? { priority: facts.priority } : {}),
        run: plan.run,
        seed: plan.seed,
        scale: plan.scale,
        // Which capacity `% capacity` rates used, and where it came from.
        capacity: plan.capacity,
        plan: { ...plan, experiment: undefined },
        experiment: plan.experiment,
        ...(rt.manifest ?? {}),
        ...ctx.manifestExtra,
      };
      writeJson(join(dir, 'manifest.json'), manifest);
      const log = openLog(events, dir);
      return classes ? teeSink(log, classes.sink) : log;
    },
  });
  // Nothing measured is lost: even a failed run writes what it recorded, then reports the failure.
  if (!x.recorded) throw x.failure;
  const e = plan.experiment;
  const upstream = upstreamAmplification(x.server?.extra);
  const cpu = x.generatorCpu ? { generator_cpu: x.generatorCpu } : {};
  const extraCols = e.lab?.llm
    ? {
        ...x.procs,
        ...cpu,
        open_connections: x.openConnections,
        ...(upstream ? { amplification_llm: upstream } : {}),
      }
    : { ...x.procs, ...cpu };
  writeTimeseries(dir, timeseriesTable(plan, x.recorded, x.server, extraCols));
  if (manifest && x.machine)
    writeJson(join(dir, 'manifest.json'), {
      ...manifest,
      machine: { ...(manifest['machine'] as object), ...x.machine },
    });
  // Record, then analyse: summary.json is the analysis of the record read back, by the
  // same entry point `metabench report` uses, so a re-analysis reproduces it byte for byte.
  // Per request class and phase, a description (their thresholds are in hypothesis).
  writeRunRecord(dir, {
    ...x.record!,
    ...(classes ? { classes: classes.summary() } : {}),
    ...(x.machine ? { machine: x.machine } : {}),
  });
  const full = analyseRun(readRunRecord(dir));
  writeJson(join(dir, 'summary.json'), full);
  if (x.failure !== undefined) throw x.failure;
  return full;
}

/**
 * Whether a run has observers to run: live /metrics or Grafana annotations. Without them
 * their modules (prom-client, the Grafana client) are not loaded: RunObservers would do nothing.
 */
function needsObservers(o: ObserveOptions | undefined): o is ObserveOptions {
  return o?.metricsPort !== undefined || o?.grafanaUrl !== undefined;
}

export interface ExecuteContext {
  readonly journal: Pick<Journal, 'record' | 'clear'>;
  readonly status: StatusLine;
  readonly stop: AbortSignal;
  /** Once the lab is up, before the run's clock starts; returns where the events go. */
  readonly onLabUp: (facts: LabUpFacts) => EventSink;
  /** The generator's scheduling priority in a real run. */
  readonly priority?: PriorityMode | undefined;
  /** The journal entry of the lab itself, cleared once the lab is down. */
  readonly labEntry?: string;
  /** The live /metrics server and Grafana annotations, when the run has them. */
  readonly observers?: RunObservers;
  readonly replay?: RunContext['replay'];
  readonly judgeLateness?: RunContext['judgeLateness'];
}

/** What a run produced (whatever happened: `failure` says what went wrong, if anything). */
export interface Executed {
  readonly recorded: Recorded | undefined;
  /** What the analysis takes (undefined when nothing was recorded). */
  readonly record: RunRecord | undefined;
  readonly summary: RunSummary | undefined;
  readonly server: ServerSeries | null;
  readonly procs: Record<string, (number | null)[]> | undefined;
  /** Attempts on the wire at each second's end (an LLM lab's streams hold connections for seconds). */
  readonly openConnections: (number | null)[];
  /** The generator's own CPU per second (a share of one core); undefined in the simulation. */
  readonly generatorCpu: (number | null)[] | undefined;
  /** The machine's load at the start and each phase's end; undefined in the simulation. */
  readonly machine: MachineState | undefined;
  readonly failure: unknown;
}

/**
 * The run itself, on a runtime, writing nothing but the events it is given: what runOnce
 * does between starting and stopping the lab, and what the simulation's own callers
 * (metabench model, the tests) run without a results folder. Its body is the
 * experiment's load and its triggers, on the run machinery of runBody.
 */
export async function executeRun(plan: RunPlan, rt: RunRuntime, ctx: ExecuteContext): Promise<Executed> {
  const e = plan.experiment;
  const lab: Lab = rt.lab;
  const triggers = new TriggerSchedule(plan.triggers, plan.run, lab, ctx.journal, (l) => ctx.status.say(l));
  const { observers, replay, judgeLateness, ...bodyCtx } = ctx;
  const live = observers?.metrics;
  // Loaded with the live metrics they feed (prom-client is a fortieth of a second to load).
  const LiveRecorder = live ? (await import('../live/liveMetrics.js')).LiveRecorder : undefined;
  let cancelTriggers: (() => void)[] = [];
  const x = await runBody(
    plan,
    rt,
    {
      ...bodyCtx,
      ...(observers
        ? {
            observers: {
              start: () => observers.start(),
              finish: (end) =>
                observers.finish({
                  experiment: e.name,
                  run: plan.run,
                  ...end,
                  triggers: triggers.records(true),
                }),
            },
          }
        : {}),
    },
    {
      label: `[${e.name}${plan.run > 1 || e.repeat > 1 ? ` run ${plan.run}` : ''}]`,
      progress: (now) => ({ phase: phaseName(plan, now), totalS: plan.totalMs / 1000 }),
      phases: [
        { name: 'warmup', endMs: plan.phases.warmup.endMs },
        { name: 'baseline', endMs: plan.phases.baseline.endMs },
        { name: 'trigger', endMs: plan.phases.trigger.endMs },
        { name: 'observe', endMs: plan.phases.observe.endMs },
      ],
      recorder: (events) => {
        const options = {
          windows: [
            { name: 'warmup', ...plan.phases.warmup },
            { name: 'baseline', ...plan.phases.baseline },
            { name: 'trigger', ...plan.phases.trigger },
            { name: 'afterTrigger', startMs: plan.phases.trigger.endMs, endMs: plan.phases.observe.endMs },
          ],
          policies: policyPresence(clientModel(e.client)),
          // Per-class counts with a mix; the successes from the baseline on when a hypothesis
          // is judged (its per-class and after-recovery windows are decided after the run).
          ...(e.load.mix ? { classes: e.load.mix.map((c) => c.name) } : {}),
          ...(hasHypothesis(e.hypothesis) ? { retainFromMs: plan.phases.baseline.startMs } : {}),
          ...(judgeLateness ? { lateness: true } : {}),
        };
        return live && LiveRecorder
          ? new LiveRecorder(options, events).observe(live)
          : new Recorder(options, events);
      },
      drive: async (r) => {
        // The triggers: each journaled (on disk) before it is applied, undone on schedule.
        cancelTriggers = triggers.arm(r.clock, r.recorder, () => ctx.stop.aborted);
        const a = plan.load.arrival;
        if (a.kind === 'closed')
          await r.settle(
            driveClosed({
              ...r.driving,
              users: a.users,
              think: a.think,
              rng: seededRng(plan.seed, 'think'),
              endMs: plan.totalMs,
            }),
          );
        else
          await r.settle(
            drive({
              ...r.driving,
              arrivals: arrivalsFor(plan),
              ...(replay?.sendDelays ? { sendDelays: replay.sendDelays } : {}),
            }),
          );
        await r.settle(triggers.undoAll(() => r.clock.now(), r.recorder));
      },
      unwind: (clock, recorder) => {
        for (const cancel of cancelTriggers) cancel();
        return rt.settle(triggers.undoAll(() => clock?.now() ?? Number.NaN, recorder));
      },
    },
  );
  if (!x.recorded) return { ...x, record: undefined, summary: undefined };
  const interrupted = ctx.stop.aborted || x.failure !== undefined;
  // Each origin's lag goes to lateness.bin.gz for the replay; the record keeps its verdict.
  const { lateness: lags, ...recorded } = x.recorded;
  const lateness: LatenessVerdict | undefined = replay?.sendDelays
    ? { kind: 'imposed' }
    : judgeLateness && lags && !interrupted
      ? await judgeLateness(lags)
      : undefined;
  const record: RunRecord = {
    plan,
    runtime: lab.runtime,
    recorded,
    server: x.scrapes > 1 ? x.server : null,
    triggers: triggers.records(true),
    triggerOutcomes: triggers.outcomes(),
    ...(x.generatorCpu ? { generatorCpu: x.generatorCpu } : {}),
    interrupted,
    ...(lateness ? { lateness } : {}),
  };
  return { ...x, record, summary: analyseRun(record) };
}

function phaseName(plan: RunPlan, ms: number): string {
  const p = plan.phases;
  return ms < p.warmup.endMs
    ? 'warmup'
    : ms < p.baseline.endMs
      ? 'baseline'
      : ms < p.trigger.endMs
        ? 'trigger'
        : 'observe';
}
