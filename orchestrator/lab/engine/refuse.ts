import { SpecError } from '../../../foundation/errors.js';
import type { Experiment } from '../../spec/schema.js';
import { apiReplicaCount } from '../../spec/sections/lab.js';
import { isReferenceServer } from '../../spec/sections/server.js';
import { replicaPortsProblem } from './replicas.js';
import { netemMissing } from '../netem.js';

/**
 * What the Docker-based runtimes refuse (docker, swarm): a reference server in the api's
 * place (their images run as services of a compose file of one's own), then replicas they cannot run.
 */
export function refuseOnDocker(
  e: Experiment,
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  if (e.lab && isReferenceServer(e.lab.api))
    throw new SpecError([
      {
        file: file ?? `experiment ${e.name}`,
        path: 'lab.api.server',
        message: `the Docker lab runs only the built-in api: the ${e.lab.api.server} server runs on the local runtime (--runtime local); its image (docs/docker-lab.md) can be a service of your own compose file (system: { compose })`,
      },
    ]);
  refuseDockerReplicas(e, file, env);
  refuseNetem(e, file);
}

/** The trigger paths of an experiment's triggers of `kind`. */
function triggerPaths(e: Experiment, kind: string): string[] {
  return e.schedule.triggers.flatMap((t, i) =>
    t.kind === kind ? [`schedule.${e.schedule.writtenAs === 'trigger' ? 'trigger' : `triggers.${i}`}`] : [],
  );
}

let netemProbe: string | undefined | null = null;

/**
 * A netem trigger needs the kernel's sch_netem (lab/netem.ts): where this machine lacks it,
 * the run is refused before anything starts, naming the module. `missing` is asked once per
 * process (its probe starts two processes).
 */
export function refuseNetem(
  e: Experiment,
  file: string | undefined,
  missing: () => string | undefined = () =>
    netemProbe === null ? (netemProbe = netemMissing()) : netemProbe,
): void {
  const paths = triggerPaths(e, 'netem');
  if (paths.length === 0) return;
  const why = missing();
  if (why === undefined) return;
  throw new SpecError(
    paths.map((p) => ({ file: file ?? `experiment ${e.name}`, path: `${p}.kind`, message: `netem: ${why}` })),
  );
}

/**
 * Refuses an experiment whose api replicas cannot all be published: replica i publishes
 * METABENCH_API_PORT + i (replicas.ts), which must stay a port (checked here against the
 * environment; the lab checks again with the --env-file's value when it comes up), and
 * their connection pools must fit the compose file's Postgres.
 */
export function refuseDockerReplicas(
  e: Experiment,
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  if (!e.lab) {
    // Your own compose file runs on the docker runtime (ComposeSystemLab); url and processes on the local one.
    if (e.system?.compose) return;
    throw new SpecError([
      {
        file: file ?? `experiment ${e.name}`,
        path: 'system',
        message:
          "your own system given by its url or processes runs on the local runtime: the Docker runtime runs the built-in lab's compose file, or yours (system.compose)",
      },
    ]);
  }
  const n = apiReplicaCount(e.lab.api);
  if (n <= 1) return;
  const base = Number(env.METABENCH_API_PORT || 8080);
  const ports = Number.isInteger(base) ? replicaPortsProblem(n, base) : undefined;
  // Every replica opens its own pool; the compose file's Postgres takes 100 connections, 3 of them reserved.
  const pool = e.lab.db?.pool;
  const connections =
    pool !== undefined && n * pool > POSTGRES_CONNECTIONS
      ? `${n} api replicas with lab.db.pool ${pool} open ${n * pool} connections, more than the ${POSTGRES_CONNECTIONS} the compose file's Postgres accepts (max_connections 100, 3 reserved)`
      : undefined;
  const why = [ports, connections].filter((x) => x !== undefined);
  if (why.length > 0)
    throw new SpecError(
      why.map((w) => ({
        file: file ?? `experiment ${e.name}`,
        path: 'lab.api.replicas',
        message: `the Docker lab cannot run them: ${w}`,
      })),
    );
}

/** The connections the api replicas may open to the Docker lab's Postgres (docker-compose.yml). */
const POSTGRES_CONNECTIONS = 97;

/** The swarm runtime deploys the built-in lab's stack: your own compose file runs on the docker runtime. */
export function refuseSwarm(e: Experiment, file: string | undefined): void {
  if (e.system?.compose)
    throw new SpecError([
      {
        file: file ?? `experiment ${e.name}`,
        path: 'system.compose',
        message:
          'your own compose file runs on the docker runtime (--runtime docker): the swarm runtime deploys the built-in lab as a stack',
      },
    ]);
  // Before the kernel's check: a task's container may run on another node, out of this host's reach.
  const netem = triggerPaths(e, 'netem');
  if (netem.length > 0)
    throw new SpecError(
      netem.map((p) => ({
        file: file ?? `experiment ${e.name}`,
        path: `${p}.kind`,
        message:
          "the swarm runtime cannot apply a netem trigger: it is set from this host in the container's network namespace, and a task's container may run on another node; use the docker runtime",
      })),
    );
  refuseOnDocker(e, file);
}
