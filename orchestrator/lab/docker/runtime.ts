import { join } from 'node:path';
import { SpecError } from '../../../foundation/errors.js';
import type { Experiment } from '../../spec/schema.js';
import { apiReplicaCount } from '../../spec/sections/lab.js';
import { localLabConfig } from '../labConfig.js';
import { realRuntime } from '../realRuntime.js';
import type { RuntimePlugin } from '../RuntimePlugin.js';
import { DEFAULT_PROJECT } from './compose.js';
import { DockerLab } from './DockerLab.js';
import { runDockerUndo } from './undo.js';

/**
 * Refuses an experiment whose lab runs api replicas: the compose project has one api
 * service (replicas are run by the local runtime and the simulation for now).
 */
export function refuseDockerReplicas(e: Experiment, file: string | undefined): void {
  const n = apiReplicaCount(e.lab.api);
  if (n > 1)
    throw new SpecError([
      {
        file: file ?? `experiment ${e.name}`,
        path: 'lab.api.replicas',
        message: `the Docker lab runs one api replica for now (this file asks for ${n}): run it with --runtime local or --runtime sim`,
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
