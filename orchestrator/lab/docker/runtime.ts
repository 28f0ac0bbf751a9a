import { join } from 'node:path';
import { SpecError } from '../../../foundation/errors.js';
import type { Experiment } from '../../spec/schema.js';
import { apiReplicaCount } from '../../spec/sections/lab.js';
import { localLabConfig } from '../labConfig.js';
import { realRuntime } from '../realRuntime.js';
import type { RuntimePlugin } from '../RuntimePlugin.js';
import { DEFAULT_PROJECT } from './compose.js';
import { DockerLab } from './DockerLab.js';
import { replicaPortsProblem } from './replicas.js';
import { runDockerUndo } from './undo.js';

/**
 * Refuses an experiment whose api replicas cannot all be published: replica i publishes
 * METABENCH_API_PORT + i (replicas.ts), which must stay a port. Checked here against the
 * environment; the lab checks again with the --env-file's value when it comes up.
 */
export function refuseDockerReplicas(
  e: Experiment,
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const n = apiReplicaCount(e.lab.api);
  if (n <= 1) return;
  const base = Number(env.METABENCH_API_PORT || 8080);
  const why = Number.isInteger(base) ? replicaPortsProblem(n, base) : undefined;
  if (why)
    throw new SpecError([
      {
        file: file ?? `experiment ${e.name}`,
        path: 'lab.api.replicas',
        message: `the Docker lab cannot run them: ${why}`,
      },
    ]);
}

/** The docker runtime: the Docker Compose lab, driven through the Engine API. */
export const dockerRuntime: RuntimePlugin = {
  name: 'docker',
  lab: (e, o) =>
    new DockerLab({
      ...localLabConfig(e, o),
      compose: o.docker ?? { project: DEFAULT_PROJECT },
    }),
  run: (plan, dir, o) =>
    realRuntime(plan, () =>
      dockerRuntime.lab!(plan.experiment, {
        seed: plan.seed,
        logFile: join(dir, 'lab.log'),
        ...(o.onProcessesChanged ? { onProcessesChanged: o.onProcessesChanged } : {}),
        ...(o.docker ? { docker: o.docker } : {}),
      }),
    ),
  refuse: refuseDockerReplicas,
  undo: { docker: runDockerUndo },
};
