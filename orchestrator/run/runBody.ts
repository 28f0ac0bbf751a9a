import type { Clock } from '../../foundation/clock.js';
import type { DriveOptions } from '../../bench/driver.js';
import type { EventSink } from '../../bench/record/eventLog.js';
import type { Recorded, Recorder } from '../../bench/record/Recorder.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { Lab } from '../lab/Lab.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan } from '../spec/plan.js';
import type { Journal } from '../trigger/journal.js';
import { buildClient } from './client.js';
import { drainMs } from '../spec/originRules.js';
import { GeneratorCpu } from './generatorCpu.js';
import { mixFor } from './load.js';
import type { RunRuntime, ServerSource } from '../lab/RuntimePlugin.js';
import { lastSecond, type StatusLine } from './status.js';
import { MachineSampler } from './machineSampler.js';
import type { MachinePhase, MachineSample, MachineState, PriorityRecord } from '../results/machineState.js';
import {
  DEFAULT_PRIORITY,
  generatorThreads,
  labNiceness,
  releaseGeneratorPriority,
  requestGeneratorPriority,
  type PriorityMode,
} from '../lab/proc/priority.js';

/** The lab, clock, recorder and client a body drives its load through. */
export interface Running {
  readonly lab: Lab;
  readonly clock: Clock;
  readonly recorder: Recorder;
  /** The driver's options but the arrivals: the client's dispatch, the recorder, deadline, drain, stop. */
  readonly driving: Omit<DriveOptions, 'arrivals'>;
  /** Waits for `p` on the runtime (runs the simulation's clock until it settles). */
  settle<T>(p: Promise<T>): Promise<T>;
}

/** What a run does between bringing the lab up and tearing it down: its load (and faults). */
export interface RunBody {
  /** The status line's label. */
  readonly label: string;
  /** The run's recorder, writing to `events` (its windows and what it retains are the body's). */
  recorder(events: EventSink): Recorder;
  /** The status line's phase and total length at `nowMs` on the run's clock. */
  progress(nowMs: number): { readonly phase: string; readonly totalS: number };
  /** Drives the load. */
  drive(r: Running): Promise<void>;
  /** Where the machine's state is sampled in a real run: each phase's end on the run's clock. */
  readonly phases?: readonly { readonly name: MachinePhase; readonly endMs: number }[];
  /**
   * On every exit path, once the timers are cancelled and before anything is torn down:
   * undoes what `drive` applied (the faults). Its failure becomes the run's.
   */
  unwind?(clock: Clock | undefined, recorder: Recorder | undefined): Promise<void>;
}

export interface RunBodyContext {
  readonly journal: Pick<Journal, 'clear'>;
  readonly status: StatusLine;
  readonly stop: AbortSignal;
  /** Once the lab is up, before the run's clock starts; returns where the events go. */
  readonly onLabUp: (facts: LabUpFacts) => EventSink;
  /** The journal entry of the lab itself, cleared once the lab is down. */
  readonly labEntry?: string | undefined;
  /** The generator's scheduling priority in a real run (default DEFAULT_PRIORITY; lab/proc/priority.ts). */
  readonly priority?: PriorityMode | undefined;
  /** Who watches from outside (the live metrics server, Grafana): started with the lab, finished once it is down. */
  readonly observers?: {
    start(): Promise<void>;
    finish(end: { originEpochMs: number | undefined; endMs: number }): Promise<void>;
  };
}

/** What a real run knows for its manifest once the lab is up (nothing in the simulation). */
export interface LabUpFacts {
  readonly priority?: PriorityRecord;
  /** The machine at the run's start (its phases come at the end). */
  readonly machine?: { readonly cores: number; readonly start: MachineSample };
}

/** What the body's run left (whatever happened: `failure` says what went wrong, if anything). */
export interface BodyRan {
  /** Undefined when the run failed before its recorder existed. */
  readonly recorded: Recorded | undefined;
  readonly server: ServerSeries | null;
  /** Samples the server source took (its series means something from two on). */
  readonly scrapes: number;
  readonly procs: Record<string, (number | null)[]> | undefined;
  /** Attempts on the wire at each second's end (an LLM lab's streams hold connections for seconds). */
  readonly openConnections: (number | null)[];
  /** The generator's own CPU per second (a share of one core); undefined in the simulation. */
  readonly generatorCpu: (number | null)[] | undefined;
  /** The machine's load at the start and at each phase's end; undefined in the simulation. */
  readonly machine: MachineState | undefined;
  /** What the generator asked for and got; undefined in the simulation. */
  readonly priority: PriorityRecord | undefined;
  readonly failure: unknown;
}

/**
 * The one code path every run goes through, `metabench run` and `metabench calibrate`
 * alike: bring the lab up, open the events, start the clock, the recorder, the transport,
 * the client, the scraper, the process sampler and the status line, run the body, then
 * — whatever happened — undo the body's faults, stop all of it, take the lab down and
 * clear its journal entry before this returns.
 */
export async function runBody(
  plan: RunPlan,
  rt: RunRuntime,
  ctx: RunBodyContext,
  body: RunBody,
): Promise<BodyRan> {
  const lab = rt.lab;
  let events: EventSink | undefined;
  let scraper: ServerSource | undefined;
  let procSampler: ReturnType<typeof rt.procSampler>;
  let watch: { stop(): Promise<void> } | undefined;
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
  // Only a real run depends on the machine: its load is recorded, its generator's priority raised.
  const machine = rt.liveStatus ? new MachineSampler(() => lab.processes().map((p) => p.pid)) : undefined;
  let priority: PriorityRecord | undefined;
  let machineState: MachineState | undefined;
  let raised = false;

  try {
    machine?.begin();
    // Before the lab starts: what the lab starts is given niceness 0 (lab/local), so its
    // processes never inherit the generator's.
    const generator = rt.liveStatus
      ? requestGeneratorPriority(ctx.priority ?? DEFAULT_PRIORITY, await generatorThreads())
      : undefined;
    raised = generator !== undefined;
    await lab.up();
    if (generator)
      priority = { generator, lab: { niceness: labNiceness(lab.processes().map((p) => p.pid)) } };
    const start = machine?.started();
    events = ctx.onLabUp({
      ...(priority ? { priority } : {}),
      ...(start ? { machine: { cores: machine!.cores, start } } : {}),
    });
    await ctx.observers?.start();
    clock = rt.clock();
    const clk = clock;
    cpu?.start(clk);
    if (body.phases) machine?.arm(clk, body.phases);
    const rec = body.recorder(events);
    recorder = rec;
    const tr = rt.transport(clk);
    transport = tr;
    const clients = buildClient(plan, tr, rec, clk, rt.newController);
    cancels.push(() => clients.dispose());
    scraper = rt.serverSource(clk);
    scraper.start();
    procSampler = rt.procSampler(clk);
    procSampler?.start();
    watch = rt.watch?.(clk, (e) => rec.note(e));

    // The status line, once a second.
    const tick = (n: number): void => {
      cancels.push(
        clk.timer(n * 1000, () => {
          const now = clk.now();
          openConnections[n - 1] = tr.openConnections ?? null;
          ctx.status.update({
            label: body.label,
            ...body.progress(now),
            elapsedS: now / 1000,
            second: lastSecond(rec),
          });
          tick(n + 1);
        }),
      );
    };
    if (rt.liveStatus) tick(1);

    const mix = mixFor(plan);
    await body.drive({
      lab,
      clock: clk,
      recorder: rec,
      driving: {
        clock: clk,
        dispatch: clients.dispatch,
        recorder: rec,
        deadlineMs: plan.deadlineMs,
        drainMs: drainMs(plan.experiment.client),
        stop: rt.stopSignal(ctx.stop),
        ...(mix ? { mix } : {}),
        ...(rt.sendTickMs ? { sendTickMs: rt.sendTickMs } : {}),
      },
      settle: (p) => rt.settle(p),
    });
  } catch (err) {
    failure = err;
  } finally {
    const endMs = clock?.now() ?? 0;
    for (const cancel of cancels) cancel();
    generatorCpu = cpu?.stop();
    machineState = machine?.stop();
    try {
      // Every exit path: the faults are undone before anything else is torn down.
      await body.unwind?.(clock, recorder).catch((err: unknown) => {
        failure ??= err;
      });
    } finally {
      // After the undo: a change a fault's undo could not explain is still seen.
      await watch?.stop().catch(() => undefined);
      server = scraper ? await scraper.stop() : null;
      procs = await procSampler?.stop();
      await transport?.close().catch(() => undefined);
      await lab.down();
      if (raised) releaseGeneratorPriority();
      if (ctx.labEntry) ctx.journal.clear(ctx.labEntry);
      await ctx.observers?.finish({ originEpochMs: clock?.originEpochMs, endMs });
      // The event log may still be writing (arrowEvents.ts's writer thread): its failure is the run's.
      await events?.close().catch((err: unknown) => {
        failure ??= err;
      });
      ctx.status.done();
    }
  }
  return {
    recorded: recorder?.close(),
    server,
    scrapes: scraper?.scrapes ?? 0,
    procs,
    openConnections,
    generatorCpu,
    machine: machineState,
    priority,
    failure,
  };
}
