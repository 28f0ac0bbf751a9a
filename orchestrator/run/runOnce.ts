import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../foundation/clock.js';
import { drive } from '../../bench/driver.js';
import { NdjsonFile, type EventSink } from '../../bench/record/eventLog.js';
import { Recorder, type Recorded } from '../../bench/record/Recorder.js';
import type { Transport } from '../../bench/transport/Transport.js';
import { arrivalsFor, mixFor } from './load.js';
import { driveClosed } from '../../bench/closedLoop.js';
import { seededRng } from '../../foundation/rng.js';
import { buildClient, clientModel, policyPresence, worstOriginMs } from './client.js';
import { hasHypothesis, summarizeRun, type RunSummary } from '../analysis/summary.js';
import { classesOfRun, upstreamAmplification } from '../analysis/classes.js';
import type { ComposeOptions } from '../lab/dockerData.js';
import { LiveRecorder } from '../live/liveMetrics.js';
import { RunObservers, type ObserveOptions } from '../live/observers.js';
import type { Lab } from '../lab/Lab.js';
import type { Runtime } from '../lab/runtimes.js';
import { describeMachine, gitRevision, metabenchVersion } from '../results/manifest.js';
import { writeJson } from '../results/files.js';
import { timeseriesCsv } from '../results/timeseries.js';
import type { RunPlan } from '../spec/plan.js';
import type { Journal } from '../trigger/journal.js';
import { TriggerSchedule } from './triggers.js';
import { GeneratorCpu } from './generatorCpu.js';
import { lastSecond, type StatusLine } from './status.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { runtimePlugin, type RunRuntime, type ServerSource } from '../lab/RuntimePlugin.js';

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
}

/**
 * One run: start the lab, drive the open-loop load through the client policies, apply
 * and undo the trigger on schedule, read the service's series every second, then
 * write manifest.json, events.ndjson, timeseries.csv and summary.json into `dir`.
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
  });
  const startedAt = new Date();
  let events: NdjsonFile | undefined;
  const x = await executeRun(plan, rt, {
    ...ctx,
    labEntry,
    observers: new RunObservers(ctx.observe ?? {}, rt.lab, (l) => ctx.status.say(l)),
    onLabUp: () => {
      writeJson(join(dir, 'manifest.json'), {
        metabench: metabenchVersion(),
        gitRevision: gitRevision(),
        startedAt: startedAt.toISOString(),
        machine: describeMachine(),
        runtime: rt.lab.runtime,
        topology: rt.lab.topology(),
        run: plan.run,
        seed: plan.seed,
        scale: plan.scale,
        // Which capacity `% capacity` rates used, and where it came from.
        capacity: plan.capacity,
        plan: { ...plan, experiment: undefined },
        experiment: plan.experiment,
        ...(rt.manifest ?? {}),
        ...ctx.manifestExtra,
      });
      events = new NdjsonFile(join(dir, 'events.ndjson'));
      return events;
    },
  });
  // Nothing measured is lost: even a failed run writes what it recorded, then reports the failure.
  if (!x.recorded) throw x.failure;
  const e = plan.experiment;
  // Per request class and phase, with the classes' thresholds (from events.ndjson).
  const classes = await classesOfRun(join(dir, 'events.ndjson'), plan).catch(() => null);
  const upstream = upstreamAmplification(x.server?.extra);
  const cpu = x.generatorCpu ? { generator_cpu: x.generatorCpu } : {};
  const extraCols = e.lab.llm
    ? {
        ...x.procs,
        ...cpu,
        open_connections: x.openConnections,
        ...(upstream ? { amplification_llm: upstream } : {}),
      }
    : { ...x.procs, ...cpu };
  writeFileSync(join(dir, 'timeseries.csv'), timeseriesCsv(plan, x.recorded, x.server, extraCols));
  const full: RunSummary = classes ? Object.assign(x.summary!, { classes }) : x.summary!;
  writeJson(join(dir, 'summary.json'), full);
  if (x.failure !== undefined) throw x.failure;
  return full;
}

export interface ExecuteContext {
  readonly journal: Pick<Journal, 'record' | 'clear'>;
  readonly status: StatusLine;
  readonly stop: AbortSignal;
  /** Once the lab is up, before the run's clock starts; returns where the events go. */
  readonly onLabUp: () => EventSink;
  /** The journal entry of the lab itself, cleared once the lab is down. */
  readonly labEntry?: string;
  /** The live /metrics server and Grafana annotations, when the run has them. */
  readonly observers?: RunObservers;
}

/** What a run produced (whatever happened: `failure` says what went wrong, if anything). */
export interface Executed {
  readonly recorded: Recorded | undefined;
  readonly summary: RunSummary | undefined;
  readonly server: ServerSeries | null;
  readonly procs: Record<string, (number | null)[]> | undefined;
  /** Attempts on the wire at each second's end (an LLM lab's streams hold connections for seconds). */
  readonly openConnections: (number | null)[];
  /** The generator's own CPU per second (a share of one core); undefined in the simulation. */
  readonly generatorCpu: (number | null)[] | undefined;
  readonly failure: unknown;
}

/**
 * The run itself, on a runtime, writing nothing but the events it is given: what runOnce
 * does between starting and stopping the lab, and what the simulation's own callers
 * (metabench model, the tests) run without a results folder.
 */
export async function executeRun(plan: RunPlan, rt: RunRuntime, ctx: ExecuteContext): Promise<Executed> {
  const e = plan.experiment;
  const lab: Lab = rt.lab;
  const triggers = new TriggerSchedule(plan.triggers, plan.run, lab, ctx.journal, (l) => ctx.status.say(l));
  let events: EventSink | undefined;
  let scraper: ServerSource | undefined;
  let procSampler: ReturnType<typeof rt.procSampler>;
  let procs: Record<string, (number | null)[]> | undefined;
  let server: ServerSeries | null;
  let transport: Transport | undefined;
  let recorder: Recorder | undefined;
  const cancels: (() => void)[] = [];
  let clock: Clock | undefined;
  let failure: unknown;
  const openConnections: (number | null)[] = [];
  // Only a real-time run has a generator whose CPU can run out.
  const cpu = rt.liveStatus ? new GeneratorCpu() : undefined;
  let generatorCpu: (number | null)[] | undefined;

  try {
    await lab.up();
    events = ctx.onLabUp();
    await ctx.observers?.start();
    clock = rt.clock();
    const clk = clock;
    cpu?.start(clk);
    const live = ctx.observers?.metrics;
    recorder = new (live ? LiveRecorder : Recorder)(
      {
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
      },
      events,
    );
    if (live && recorder instanceof LiveRecorder) recorder.observe(live);
    const rec = recorder;
    transport = rt.transport(clk);
    const clients = buildClient(plan, transport, rec, clk, rt.newController);
    cancels.push(() => clients.dispose());
    scraper = rt.serverSource(clk);
    scraper.start();
    procSampler = rt.procSampler(clk);
    procSampler?.start();

    // The triggers: each journaled (on disk) before it is applied, undone on schedule.
    cancels.push(...triggers.arm(clk, rec, () => ctx.stop.aborted));

    // The status line, once a second.
    const label = `[${e.name}${plan.run > 1 || e.repeat > 1 ? ` run ${plan.run}` : ''}]`;
    const tick = (n: number): void => {
      cancels.push(
        clk.timer(n * 1000, () => {
          const now = clk.now();
          openConnections[n - 1] =
            (transport as { openConnections?: number } | undefined)?.openConnections ?? null;
          ctx.status.update({
            label,
            phase: phaseName(plan, now),
            elapsedS: now / 1000,
            totalS: plan.totalMs / 1000,
            second: lastSecond(rec),
          });
          tick(n + 1);
        }),
      );
    };
    if (rt.liveStatus) tick(1);

    const mix = mixFor(plan);
    const common = {
      clock: clk,
      send: clients.send,
      recorder: rec,
      deadlineMs: plan.deadlineMs,
      drainMs: worstOriginMs(e.client) + 500,
      stop: rt.stopSignal(ctx.stop),
      ...(mix ? { mix } : {}),
      ...(rt.newController ? { newController: rt.newController } : {}),
    };
    const a = plan.load.arrival;
    if (a.kind === 'closed')
      await rt.settle(
        driveClosed({
          ...common,
          users: a.users,
          think: a.think,
          rng: seededRng(plan.seed, 'think'),
          endMs: plan.totalMs,
        }),
      );
    else await rt.settle(drive({ ...common, arrivals: arrivalsFor(plan) }));
    await rt.settle(triggers.undoAll(() => clk.now(), rec));
  } catch (err) {
    failure = err;
  } finally {
    const endMs = clock?.now() ?? 0;
    for (const cancel of cancels) cancel();
    generatorCpu = cpu?.stop();
    try {
      // Every exit path: the faults are undone before anything else is torn down.
      await rt.settle(triggers.undoAll(() => clock?.now() ?? Number.NaN, recorder)).catch((err: unknown) => {
        failure ??= err;
      });
    } finally {
      server = scraper ? await scraper.stop() : null;
      procs = await procSampler?.stop();
      await transport?.close().catch(() => undefined);
      await lab.down();
      if (ctx.labEntry) ctx.journal.clear(ctx.labEntry);
      await ctx.observers?.finish({
        experiment: e.name,
        run: plan.run,
        originEpochMs: (clock as { originEpochMs?: number } | undefined)?.originEpochMs,
        endMs,
        triggers: triggers.records(true),
      });
      await events?.close().catch(() => undefined);
      ctx.status.done();
    }
  }

  if (!recorder)
    return { recorded: undefined, summary: undefined, server, procs, openConnections, generatorCpu, failure };
  const recorded = recorder.close();
  const summary = summarizeRun({
    plan,
    runtime: lab.runtime,
    recorded,
    server: scraper && scraper.scrapes > 1 ? server : null,
    triggers: triggers.records(true),
    triggerOutcomes: triggers.outcomes(),
    ...(generatorCpu ? { generatorCpu } : {}),
    interrupted: ctx.stop.aborted || failure !== undefined,
  });
  return { recorded, summary, server, procs, openConnections, generatorCpu, failure };
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
