import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RealClock } from '../../bench/clock.js';
import { drive } from '../../bench/driver.js';
import { NdjsonFile } from '../../bench/record/eventLog.js';
import { Recorder } from '../../bench/record/Recorder.js';
import { HttpTransport } from '../../bench/transport/http.js';
import { arrivalsFor, mixFor } from './load.js';
import { driveClosed } from '../../bench/closedLoop.js';
import { seededRng } from '../../bench/rng.js';
import { buildClient, clientModel, policyPresence, worstOriginMs } from './client.js';
import { hasHypothesis, summarizeRun, type RunSummary } from '../analysis/summary.js';
import { createLab } from '../lab/createLab.js';
import { DEFAULT_RUNTIME, type Runtime } from '../lab/runtimes.js';
import type { Lab } from '../lab/Lab.js';
import { describeMachine, gitRevision, metabenchVersion } from '../results/manifest.js';
import { writeJson } from '../results/files.js';
import { timeseriesCsv } from '../results/timeseries.js';
import { connectionCap, type RunPlan } from '../spec/plan.js';
import type { Journal } from '../trigger/journal.js';
import { TriggerSchedule } from './triggers.js';
import type { StatusLine } from './status.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { Scraper } from '../scrape/scraper.js';
import { ProcSampler } from '../lab/local/procSampler.js';
import { classesOfRun, upstreamAmplification } from '../analysis/classes.js';
import type { ComposeOptions } from '../lab/docker/compose.js';
import { LiveRecorder } from '../live/liveMetrics.js';
import { RunObservers, type ObserveOptions } from '../live/observers.js';

export interface RunContext {
  readonly journal: Journal;
  readonly status: StatusLine;
  /** Aborts when the user interrupts (Ctrl-C, SIGTERM): the run stops, undoes its faults and keeps what it measured. */
  readonly stop: AbortSignal;
  /** Extra facts for manifest.json (the command line, overrides). */
  readonly manifestExtra?: Record<string, unknown>;
  /** The lab's runtime (default: local). */
  readonly runtime?: Runtime;
  /** The docker runtime's compose project (default: the default project). */
  readonly docker?: ComposeOptions | undefined;
  /** The live /metrics server and Grafana annotations. */
  readonly observe?: ObserveOptions;
}

/**
 * One run on the local lab: start the lab, drive the open-loop load through the client
 * policies, apply and undo the trigger on schedule, scrape the service every second,
 * then write manifest.json, events.ndjson, timeseries.csv and summary.json into `dir`.
 * Whatever happens, the trigger is undone and the lab stopped before this returns.
 */
export async function runOnce(plan: RunPlan, dir: string, ctx: RunContext): Promise<RunSummary> {
  mkdirSync(dir, { recursive: true });
  const e = plan.experiment;
  const labEntry = `run-${plan.run}-lab`;
  const lab: Lab = createLab(ctx.runtime ?? DEFAULT_RUNTIME, e, {
    seed: plan.seed,
    logFile: join(dir, 'lab.log'),
    // The lab's processes are journaled like a fault: a killed orchestrator leaves none behind.
    onProcessesChanged: () =>
      ctx.journal.record({ id: labEntry, appliedAt: new Date().toISOString(), undo: lab.teardownRecipe() }),
    ...(ctx.docker ? { docker: ctx.docker } : {}),
  });
  const observers = new RunObservers(ctx.observe ?? {}, lab, (l) => ctx.status.say(l));
  const startedAt = new Date();
  const triggers = new TriggerSchedule(plan.triggers, plan.run, lab, ctx.journal, (l) => ctx.status.say(l));
  let events: NdjsonFile | undefined;
  let scraper: Scraper | undefined;
  let procSampler: ProcSampler | undefined;
  let procs: Record<string, (number | null)[]> | undefined;
  let server: ServerSeries | null;
  let transport: HttpTransport | undefined;
  let recorder: Recorder | undefined;
  const cancels: (() => void)[] = [];
  let clock: RealClock | undefined;
  let failure: unknown;
  /** Attempts on the wire at each second's end (an LLM lab's streams hold connections for seconds). */
  const openConnections: (number | null)[] = [];

  try {
    await lab.up();
    writeJson(join(dir, 'manifest.json'), {
      metabench: metabenchVersion(),
      gitRevision: gitRevision(),
      startedAt: startedAt.toISOString(),
      machine: describeMachine(),
      runtime: lab.runtime,
      topology: lab.topology(),
      run: plan.run,
      seed: plan.seed,
      scale: plan.scale,
      // Which capacity `% capacity` rates used, and where it came from.
      capacity: plan.capacity,
      plan: { ...plan, experiment: undefined },
      experiment: e,
      ...ctx.manifestExtra,
    });
    events = new NdjsonFile(join(dir, 'events.ndjson'));
    await observers.start();
    clock = new RealClock();
    const clk = clock;
    const live = observers.metrics;
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
    transport = new HttpTransport({ url: lab.apiUrl, connections: connectionCap(plan), clock: clk });
    const clients = buildClient(plan, transport, rec, clk);
    cancels.push(() => clients.dispose());
    scraper = new Scraper(lab, 'api', clk);
    scraper.start();
    procSampler = new ProcSampler(() => lab.processes(), clk);
    procSampler.start();

    // The triggers: each journaled (on disk) before it is applied, undone on schedule.
    cancels.push(...triggers.arm(clk, rec, () => ctx.stop.aborted));

    // The status line, once a second.
    const label = `[${e.name}${plan.run > 1 || e.repeat > 1 ? ` run ${plan.run}` : ''}]`;
    const tick = (n: number): void => {
      cancels.push(
        clk.timer(n * 1000, () => {
          const now = clk.now();
          openConnections[n - 1] = transport?.openConnections ?? null;
          ctx.status.update({
            label,
            phase: phaseName(plan, now),
            elapsedS: now / 1000,
            totalS: plan.totalMs / 1000,
            live: rec.takeLive(),
            p99Ms: rec.p99BeforeMs(now),
          });
          tick(n + 1);
        }),
      );
    };
    tick(1);

    const mix = mixFor(plan);
    const common = {
      clock: clk,
      send: clients.send,
      recorder: rec,
      deadlineMs: plan.deadlineMs,
      drainMs: worstOriginMs(e.client) + 500,
      stop: ctx.stop,
      ...(mix ? { mix } : {}),
    };
    const a = plan.load.arrival;
    if (a.kind === 'closed')
      await driveClosed({
        ...common,
        users: a.users,
        think: a.think,
        rng: seededRng(plan.seed, 'think'),
        endMs: plan.totalMs,
      });
    else await drive({ ...common, arrivals: arrivalsFor(plan) });
    await triggers.undoAll(() => clk.now(), rec);
  } catch (err) {
    failure = err;
  } finally {
    const endMs = clock?.now() ?? 0;
    for (const cancel of cancels) cancel();
    try {
      // Every exit path: the faults are undone before anything else is torn down.
      await triggers
        .undoAll(() => clock?.now() ?? Number.NaN, recorder)
        .catch((err: unknown) => {
          failure ??= err;
        });
    } finally {
      server = scraper ? await scraper.stop() : null;
      procs = await procSampler?.stop();
      await transport?.close().catch(() => undefined);
      await lab.down();
      ctx.journal.clear(labEntry);
      await observers.finish({
        experiment: e.name,
        run: plan.run,
        originEpochMs: clock?.originEpochMs,
        endMs,
        triggers: triggers.records(true),
      });
      await events?.close().catch(() => undefined);
      ctx.status.done();
    }
  }

  // Nothing measured is lost: even a failed run writes what it recorded, then reports the failure.
  if (!recorder) throw failure;
  const recorded = recorder.close();
  const summary = summarizeRun({
    plan,
    runtime: lab.runtime,
    recorded,
    server: scraper && scraper.scrapes > 1 ? server : null,
    triggers: triggers.records(true),
    interrupted: ctx.stop.aborted || failure !== undefined,
  });
  // Per request class and phase, with the classes' thresholds (from events.ndjson).
  const classes = await classesOfRun(join(dir, 'events.ndjson'), plan).catch(() => null);
  const upstream = upstreamAmplification(server?.extra);
  const extraCols = e.lab.llm
    ? {
        ...procs,
        open_connections: openConnections,
        ...(upstream ? { amplification_llm: upstream } : {}),
      }
    : procs;
  writeFileSync(join(dir, 'timeseries.csv'), timeseriesCsv(plan, recorded, server, extraCols));
  const full: RunSummary = classes ? Object.assign(summary, { classes }) : summary;
  writeJson(join(dir, 'summary.json'), full);
  if (failure !== undefined) throw failure;
  return full;
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
