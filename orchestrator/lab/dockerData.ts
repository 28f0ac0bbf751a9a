/**
 * The docker runtime's plain data that crosses the lab's interface: where its engine answers,
 * its compose project, and its fault-journal recipe. They sit here, below the runtimes, because
 * Lab's UndoRecipe and a run's options carry them; the code that acts on them is in docker/.
 */

/**
 * Where the Docker engine answers, found as the docker CLI finds it: a unix socket, an HTTP(S)
 * address (tcp://, with the TLS files' paths), or ssh:// (the engine reached through `docker
 * system dial-stdio` on the remote host). Plain data, so a fault-journal recipe can reach the
 * same engine from another process. `from` says where it was found, for error messages.
 */
export type EngineAddress = (
  | { readonly socketPath: string }
  | { readonly url: string; readonly tls?: EngineTls }
  | { readonly ssh: string }
) & { readonly from?: string };

/** TLS for a tcp:// engine: PEM files (any may be absent) and whether the server's certificate is verified. */
export interface EngineTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly verify: boolean;
}

/** The compose project a docker lab runs as. */
export interface ComposeOptions {
  /** Compose project name (its containers carry com.docker.compose.project=<project>). */
  readonly project: string;
  /** An env file of image/port overrides (docker/offline.env), passed as --env-file. */
  readonly envFile?: string | undefined;
  readonly file?: string;
  /** Files merged over it (`-f` after `-f file`): the api replicas' generated override. */
  readonly overrides?: readonly string[];
}

/** A fault-journal recipe that undoes a Docker action through the Engine API. */
export interface DockerUndo {
  readonly kind: 'docker';
  /**
   * uncap: lift a CPU quota. The Engine cannot reset one (an update with NanoCpus 0 changes
   * nothing: docker/for-linux#558), so it sets the quota to every core of the engine's
   * machine, which limits nothing. netem-del: take the netem qdisc off the container's
   * interface (lab/netem.ts), from this host, in the network namespace of its process now.
   */
  readonly action: 'unpause' | 'start' | 'uncap' | 'netem-del';
  readonly container: string;
  readonly engine: EngineAddress;
  readonly what: string;
}

/**
 * A fault-journal recipe that takes a compose project down through the Engine API, as `compose
 * down -v --remove-orphans` does: every container, network and volume with its project label.
 * Journaled while a run's own compose file (system.compose) is up, so a killed orchestrator
 * leaves none of it running; it needs neither the compose files nor the compose CLI.
 */
export interface ComposeDownUndo {
  readonly kind: 'compose-down';
  readonly project: string;
  readonly engine: EngineAddress;
  readonly what: string;
}

/**
 * An HTTP request to a service of a swarm stack that publishes no port (the fault proxy's API:
 * remove a toxic, re-enable a link), sent through a port-forward over the engine (the stack's
 * control container runs the pipe, lab/swarm/forward.ts): what `lab reset` needs once the
 * orchestrator that held the forward is gone.
 */
export interface ForwardedHttpUndo {
  readonly kind: 'http-forwarded';
  readonly method: 'DELETE' | 'POST';
  /** The path and query, from the service's root ("/proxies/redis/toxics/t1"). */
  readonly path: string;
  readonly body?: Record<string, unknown>;
  /** The service and container port, as the stack's network names them ("toxiproxy", 8474). */
  readonly host: string;
  readonly port: number;
  /** The control container and the engine of its node. */
  readonly container: string;
  readonly engine: EngineAddress;
  readonly what: string;
}
