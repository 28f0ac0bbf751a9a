import { MIN_TREND_S } from '../../analysis/outcome.js';
import { describeClient } from '../../run/client.js';
import { describeLoad } from '../../spec/loadPlan.js';
import { describeTrigger } from '../../spec/sections/schedule.js';
import type { TriggerSpec } from '../../spec/sections/schedule.js';
import type { RunManifest } from '../manifest.js';
import type { Experiment } from '../../spec/schema.js';
import { describeSystem, type SystemSection } from '../../spec/sections/system.js';
import { duration, exact, si, tex } from './tex.js';

/**
 * methods.tex: the methods section of what ran, one paragraph per part, written from
 * run-1/manifest.json and the resolved experiment it records, nothing else: every
 * sentence states a recorded value, so the text cannot claim what did not run.
 */

/** The plan fields methods.tex reads (orchestrator/spec/plan.ts's RunPlan, as JSON). */
interface RecordedPlan {
  readonly ratePerS: number | null;
  readonly phases: Record<'warmup' | 'baseline' | 'trigger' | 'observe', { startMs: number; endMs: number }>;
  readonly triggers: readonly { spec: TriggerSpec; startMs: number; endMs: number }[];
  readonly recovery: { within: number; tolerance: number; windowMs: number; holdMs: number };
}

const RUNTIMES: Record<string, string> = {
  local: 'as child processes on the loopback interface of this machine (runtime \\texttt{local})',
  docker: 'as Docker Compose containers (runtime \\texttt{docker})',
  swarm: 'as a Docker Swarm stack (runtime \\texttt{swarm})',
  sim: 'as a discrete-event simulation in virtual time (runtime \\texttt{sim})',
};

/** Settings of an object beyond those a sentence already states, as "key = value" pairs. */
function settings(o: Record<string, unknown>, skip: readonly string[], prefix = ''): string[] {
  return Object.entries(o)
    .filter(([k, v]) => !skip.includes(k) && v !== undefined)
    .flatMap(([k, v]) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? settings(v as Record<string, unknown>, [], `${prefix}${k}.`)
        : [`${prefix}${k} = ${Array.isArray(v) ? JSON.stringify(v) : String(v)}`],
    );
}

function list(items: readonly string[]): string {
  return items.map((i) => `\\texttt{${tex(i)}}`).join(', ');
}

const sec = (ms: number): string => exact(ms / 1000, '\\second');

/** What the machine paragraph reads: a run's or a calibration's manifest.json (results/manifest.ts, provenance). */
type Provenance = Pick<RunManifest, 'machine' | 'metabench' | 'gitRevision' | 'runtime'>;

/** The machine, software and runtime that ran `what` ("experiment", "step test"). */
export function machineParagraph(m: Provenance, what: string): string {
  const mc = m.machine;
  return `\\paragraph{Machine and software.} ${
    mc
      ? `The ${what} ran on a machine with ${mc.cpus} logical CPUs (${tex(mc.cpuModel)}) and ${si(mc.memoryBytes / 2 ** 30, '\\gibi\\byte')} of memory, running ${tex(mc.os)}, under Node.js ${tex(mc.node)}`
      : 'The machine was not recorded'
  }, with metabench ${tex(m.metabench)}${m.gitRevision ? ` (git revision \\texttt{${tex(m.gitRevision.slice(0, 12))}}${m.gitRevision.endsWith('-dirty') ? ', with uncommitted changes' : ''})` : ''}. The lab ran ${RUNTIMES[m.runtime] ?? `in runtime \\texttt{${tex(m.runtime)}}`}.`;
}

/** A system metabench did not write: where the load went and where its server-side figures came from. */
function systemParagraph(s: SystemSection): string {
  return `\\paragraph{System.} The service under test was ${tex(describeSystem(s))}; metabench knows neither its workers nor its work.`;
}

/** The lab as the resolved experiment declares it, and the components the runtime started. */
export function labParagraph(e: Experiment, topology: RunManifest['topology']): string {
  if (!e.lab) return systemParagraph(e.system!);
  const api = e.lab.api;
  const work = `${api.work.dist} service times with mean ${duration(api.work.mean)}${api.work.sigma !== undefined ? ` (log-space $\\sigma = ${api.work.sigma}$)` : ''}`;
  const apiExtra = settings(api as unknown as Record<string, unknown>, [
    'workers',
    'work',
    'queue',
    'replicas',
  ]);
  const deps = Object.keys(e.lab).filter((k) => k !== 'api');
  const components = (topology?.components ?? []).map((c) => c.name);
  return (
    `\\paragraph{Lab.} The service under test (the api) ran ${api.replicas !== undefined ? `${api.replicas} replicas, each with ` : ''}${api.workers} workers serving a ${api.queue.toUpperCase()} queue, with ${work}.` +
    (apiExtra.length ? ` Its other settings: ${list(apiExtra)}.` : '') +
    (deps.length
      ? ` Its dependencies: ${deps
          .map(
            (k) =>
              `${tex(k)} (${list(settings((e.lab as Record<string, unknown>)[k] as Record<string, unknown>, []))})`,
          )
          .join('; ')}.`
      : ' It had no dependencies.') +
    (components.length ? ` The lab's components: ${list(components)}.` : '')
  );
}

export function methodsTex(m: RunManifest, runs: number): string {
  const e = m.experiment;
  const plan = m.plan as unknown as RecordedPlan;
  const paragraphs: string[] = [];

  paragraphs.push(machineParagraph(m, 'experiment'), labParagraph(e, m.topology));

  const c = m.capacity;
  const usesPercent = JSON.stringify(e.load).includes('capacityFraction');
  paragraphs.push(
    `\\paragraph{Load.} An ${tex(describeLoad(e.load))}.` +
      (plan.ratePerS !== null && plan.ratePerS !== undefined
        ? ` The offered rate was ${exact(plan.ratePerS, '\\per\\second')}.`
        : '') +
      (usesPercent && c.usedPerS !== null
        ? ` Capacity, against which the percentage is taken, was ${exact(c.usedPerS, '\\per\\second')} (${tex(c.from)}).`
        : ''),
  );

  const retry = e.client.retry as { policy: string; maxAttempts?: number };
  paragraphs.push(
    `\\paragraph{Client.} Each attempt had a timeout of ${duration(e.client.timeout)}; retries: policy \\texttt{${tex(retry.policy)}}${retry.maxAttempts !== undefined ? `, at most ${retry.maxAttempts} attempts per request` : ''}. In full, the client model was: ${tex(describeClient(e.client))}.`,
  );

  const ph = plan.phases;
  const triggers = plan.triggers.map(
    (t) => `${tex(describeTrigger(t.spec, m.scale))}, from ${sec(t.startMs)} to ${sec(t.endMs)}`,
  );
  paragraphs.push(
    `\\paragraph{Schedule and trigger.} Times are from the start of the run: a warm-up of ${sec(ph.warmup.endMs - ph.warmup.startMs)}, a baseline from ${sec(ph.baseline.startMs)} to ${sec(ph.baseline.endMs)}, then the trigger${triggers.length > 1 ? 's' : ''}: ${triggers.join('; ')}. Measurement continued to ${sec(ph.observe.endMs)}, ${sec(ph.observe.endMs - ph.observe.startMs)} after the trigger window ended. These are the scheduled times; the outcome table gives the times each trigger took effect.`,
  );

  const r = plan.recovery;
  const triggerMs = ph.trigger.endMs - ph.trigger.startMs;
  paragraphs.push(
    `\\paragraph{Recovery criterion.} A run recovered at the first second $t$ after the trigger's end such that mean goodput over the window $[t, t + ${+(r.windowMs / 1000).toFixed(3)}\\,\\mathrm{s})$, and over every such window starting in $[t, t + ${+(r.holdMs / 1000).toFixed(3)}\\,\\mathrm{s}]$, was at least ${exact((1 - r.tolerance) * 100, '\\percent')} of the baseline goodput (tolerance ${exact(r.tolerance * 100, '\\percent')}). It counted as recovered when that took at most ${r.within} times the trigger's duration (${sec(r.within * triggerMs)}), recovered late when longer, and metastable when not recovered by the end of the observation with goodput showing no upward trend over the observation's last third (at least ${MIN_TREND_S}~s; the Mann--Kendall test with the Hamed--Rao correction for autocorrelation, one-sided at 95\\%), the backlog not shrinking where scraped, and a sustaining mechanism measured past its threshold (load at or above capacity, a cold cache with the database saturated, error paths, replicas down, or GC time). A run not recovered otherwise is not recovered: still recovering (with the time goodput would reach the threshold at the measured trend, and its interval) or with no sustaining effect found.`,
  );

  paragraphs.push(
    `\\paragraph{Seeds, repetitions and scale.} The experiment seed was ${e.seed} (run 1 uses it; run $i > 1$ derives its own from it); ${runs} repetition${runs === 1 ? '' : 's'} ran of the ${e.repeat} declared; every duration of the schedule and of the recovery criterion was scaled by ${+m.scale.toFixed(6)}.`,
  );
  return `${paragraphs.join('\n\n')}\n`;
}
