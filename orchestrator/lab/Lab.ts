import type { UndoRecipe } from './undoRecipe.js';
import type { LinkControl } from './links.js';
import type { Runtime } from './runtimes.js';

export type { UndoRecipe } from './undoRecipe.js';

/** A part of the lab that a trigger can act on. */
export type Component = 'api' | 'redis' | 'postgres' | 'llm';

export interface LabProcess {
  /** A component, or the fault proxy that carries the api's dependency links. */
  readonly component: Component | 'faultproxy';
  readonly pid: number;
  readonly command: string;
}

/** What manifest.json records of the lab. */
export interface LabTopology {
  readonly runtime: Runtime;
  readonly components: readonly {
    name: Component;
    url: string;
    pid: number | null;
    /** The component's software version (Redis, Postgres), when it has one of its own. */
    version?: string;
    config: Record<string, unknown>;
  }[];
  /** Who talks to whom: `from -> to` edges (the api's dependencies). */
  readonly links?: readonly {
    from: Component;
    to: Component;
    /** Where the api connects: the fault proxy's listen address when the link is proxied. */
    address: string;
    /** The proxy of this link, and the dependency's own address behind it. */
    proxy?: { name: string; upstream: string; api: string };
  }[];
}

/**
 * What the orchestrator can do to the system under test. Implemented by the local
 * runtime (child processes), the docker runtime (lab/docker/DockerLab.ts) and the
 * simulation (sim/SimLab.ts). Every method is safe to call twice; `down` never throws.
 */
export interface Lab {
  readonly runtime: Runtime;
  /** Base URL of the api, for the load generator. */
  readonly apiUrl: string;
  /** Starts every component and waits until each answers; throws BenchError(E_LAB_PREFLIGHT) when it cannot. */
  up(): Promise<void>;
  down(): Promise<void>;
  /** Freezes a component (SIGSTOP locally, like `docker pause`): it keeps its connections and answers nothing. */
  pause(c: Component): Promise<void>;
  resume(c: Component): Promise<void>;
  /** The undo of pause(c), as a recipe that works without this object. */
  pauseUndoRecipe(c: Component): UndoRecipe;
  /** SIGKILL (like `docker kill`): queue and in-flight work are lost; nothing restarts it until start(c). */
  kill(c: Component): Promise<void>;
  /** A graceful stop (SIGTERM, like `docker stop`); it stays down until start(c). */
  stop(c: Component): Promise<void>;
  /** Starts a killed or stopped component again, on the same address, and waits until it answers. */
  start(c: Component): Promise<void>;
  /**
   * How to take the lab down without this object (after the orchestrator is killed):
   * stop every process it started and remove what it made; `none` when nothing runs.
   */
  teardownRecipe(): UndoRecipe;
  /** The undo of kill(c) or stop(c), as a recipe that works without this object. */
  startUndoRecipe(c: Component): UndoRecipe;
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
  /** Empties the cache (Redis FLUSHALL); throws BenchError when the lab has none. */
  flushCache(): Promise<void>;
  /**
   * Prometheus text of a component's /metrics (the api's; the llm stub's at `llmUrl`);
   * rejects when it does not answer within `timeoutMs`, or the component has none here.
   */
  scrapeText(c: Component, timeoutMs: number): Promise<string>;
  topology(): LabTopology;
  /** The running processes of the lab (one root per component), for per-process CPU and memory. */
  processes(): readonly LabProcess[];
}
