import type { UndoRecipe } from './undoRecipe.js';
import type { LinkControl } from './links.js';
import type { Runtime } from './runtimes.js';
import type { Component, Target } from './target.js';
import type { Pinning } from './proc/affinity.js';
import type { NetemSpec } from './netem.js';

export type { UndoRecipe } from './undoRecipe.js';
import type { ApiState } from '../../services/api/apiState.js';
export type { Component, Target } from './target.js';

export interface LabProcess {
  /** A component, or the fault proxy that carries the api's dependency links. */
  readonly component: Component | 'faultproxy' | (string & {});
  readonly pid: number;
  readonly command: string;
  /** Which api replica, 0-based: set only when the lab runs several (lab.api.replicas). */
  readonly replica?: number;
}

/** A process's name in per-process columns and labels: `api`, or `api0`, `api1`… with several replicas. */
export function processName(p: Pick<LabProcess, 'component' | 'replica'>): string {
  return p.replica === undefined ? p.component : `${p.component}${p.replica}`;
}

/** What manifest.json records of the lab. */
export interface LabTopology {
  readonly runtime: Runtime;
  readonly components: readonly {
    /** A component of the built-in lab, or of your own system (system:). */
    name: Component | (string & {});
    url: string;
    pid: number | null;
    /** The component's software version (Redis, Postgres), when it has one of its own. */
    version?: string;
    config: Record<string, unknown>;
    /** The api's replicas, by index, when the lab runs several (lab.api.replicas). */
    replicas?: readonly { url: string; pid: number | null }[];
  }[];
  /** Who talks to whom: `from -> to` edges (the api's dependencies; `client -> api` when the run goes through the api link). */
  readonly links?: readonly {
    from: Component | (string & {});
    to: Component | (string & {});
    /** Where the api connects: the fault proxy's listen address when the link is proxied. */
    address: string;
    /** The proxy of this link, and the dependency's own address behind it. */
    proxy?: { name: string; upstream: string; api: string };
  }[];
}

/**
 * What the orchestrator can do to the system under test. Implemented by the local
 * runtime (child processes), the docker and swarm runtimes (lab/engine/DockerLab.ts) and the
 * simulation (sim/SimLab.ts). Every method is safe to call twice; `down` never throws.
 */
export interface Lab {
  readonly runtime: Runtime;
  /** Base URL of the api (of replica 0 when it has several): its health and its single address. */
  readonly apiUrl: string;
  /** Every api replica's base URL, by replica index (one with one api), for the load generator. */
  readonly apiUrls: readonly string[];
  /**
   * Where the load generator sends, by replica index: through the api link (the fault proxy,
   * apiLink.ts) when the run uses it; absent, or before up(), the api's own `apiUrls`. Health,
   * scrapes and the run-time switch always use `apiUrls`.
   */
  readonly clientUrls?: readonly string[] | undefined;
  /** Starts every component and waits until each answers; throws BenchError(E_LAB_PREFLIGHT) when it cannot. */
  up(): Promise<void>;
  /** The CPU pinning of the generator and the lab once up (the local runtime); absent: not applicable. */
  readonly pinning?: Pinning | undefined;
  down(): Promise<void>;
  /**
   * Freezes a component (SIGSTOP locally, like `docker pause`): it keeps its connections
   * and answers nothing. A target is a component (`api`: every replica) or one api
   * replica (`api[1]`), as in target.ts; so for every method below.
   */
  pause(t: Target): Promise<void>;
  resume(t: Target): Promise<void>;
  /** The undo of pause(t), as a recipe that works without this object (it continues exactly t's processes). */
  pauseUndoRecipe(t: Target): UndoRecipe;
  /** SIGKILL (like `docker kill`): queue and in-flight work are lost; nothing restarts it until start(t). */
  kill(t: Target): Promise<void>;
  /** A graceful stop (SIGTERM, like `docker stop`); it stays down until start(t). */
  stop(t: Target): Promise<void>;
  /** Starts a killed or stopped component (or replica) again, on the same address, and waits until it answers. */
  start(t: Target): Promise<void>;
  /**
   * How to take the lab down without this object (after the orchestrator is killed):
   * stop every process it started and remove what it made; `none` when nothing runs.
   */
  teardownRecipe(): UndoRecipe;
  /** The undo of kill(t) or stop(t), as a recipe that works without this object. */
  startUndoRecipe(t: Target): UndoRecipe;
  /**
   * The Toxiproxy-API server that carries the api's dependency links (our fault proxy
   * locally, Toxiproxy in Docker), with one proxy per link named after the dependency
   * (`redis`, `postgres`, `llm`); undefined when the lab has no links.
   */
  readonly faultProxyApi: string | undefined;
  /**
   * The LLM provider stub's own address (its run-time switch, /_stub/state, for the
   * provider-outage trigger); undefined when the lab has no provider.
   */
  readonly llmUrl?: string | undefined;
  /**
   * The dependency links' controls when the lab drives them itself (the simulation);
   * absent, the triggers drive `faultProxyApi` over the Toxiproxy HTTP API.
   */
  readonly linkControl?: LinkControl | undefined;
  /**
   * The api's run-time capacity switch where the lab has no HTTP to it (the simulation):
   * sets replica `replica`'s state. Absent: the triggers use each replica's /_api/state.
   */
  readonly apiControl?: { setState(replica: number, state: ApiState): Promise<void> } | undefined;
  /** Empties the cache (Redis FLUSHALL); throws BenchError when the lab has none. */
  /** A CPU quota of `cpus` cores on what `t` names (cpu-limit); absent where the runtime has none. */
  limitCpu?(t: Target, cpus: number): Promise<void>;
  /** Lifts the quota limitCpu(t) set. */
  unlimitCpu?(t: Target): Promise<void>;
  /** How to lift it without this object (journaled before limitCpu). */
  cpuLimitUndoRecipe?(t: Target): UndoRecipe;
  flushCache(): Promise<void>;
  /** A netem qdisc (packet delay, loss) on the network interface of what `t` names; absent where the runtime has none. */
  netem?(t: Target, spec: NetemSpec): Promise<void>;
  /** Takes off the qdisc netem(t) put on. */
  unnetem?(t: Target): Promise<void>;
  /** How to take it off without this object (journaled before netem). */
  netemUndoRecipe?(t: Target): UndoRecipe;
  /**
   * Prometheus text of a component's /metrics (`api[i]`: that replica's; `api`: replica
   * 0's; `llm`: the stub's at `llmUrl`); rejects when it does not answer within
   * `timeoutMs`, or the component has none here.
   */
  scrapeText(t: Target, timeoutMs: number): Promise<string>;
  topology(): LabTopology;
  /** The running processes of the lab (one root per component), for per-process CPU and memory. */
  processes(): readonly LabProcess[];
}
