import { join } from 'node:path';
import { localLabConfig } from '../labConfig.js';
import { realRuntime } from '../realRuntime.js';
import { EVERY_TRIGGER, type RuntimePlugin } from '../RuntimePlugin.js';
import { DEFAULT_PROJECT } from '../engine/compose.js';
import { ComposeSystemLab } from '../engine/ComposeSystemLab.js';
import { DockerLab } from '../engine/DockerLab.js';
import { composeLinkOf, composeMetricsEndpoint } from '../../spec/sections/system.js';
import { refuseOnDocker } from '../engine/refuse.js';
import { runComposeDown, runDockerUndo } from '../engine/undo.js';

/** The docker runtime: the Docker Compose lab, driven through the Engine API. */
export const dockerRuntime: RuntimePlugin = {
  name: 'docker',
  capabilities: {
    // Every kind through the Lab interface, and kinds that act on this machine (a file, a command).
    triggers: EVERY_TRIGGER,
    virtualTime: false,
    compose: true,
    labOnThisMachine: true,
    apiLink: true,
  },
  // Your own compose file (system.compose), or the built-in lab's.
  lab: (e, o) =>
    e.system?.compose
      ? new ComposeSystemLab({
          file: e.system.compose.file,
          // Never the built-in lab's project: its down removes every container of the project.
          project:
            e.system.compose.project ??
            (o.docker && o.docker.project !== DEFAULT_PROJECT ? o.docker.project : 'metabench-system'),
          entry: e.system.compose.entry,
          links: e.system.compose.links.map(composeLinkOf),
          metrics: composeMetricsEndpoint(e.system.metrics),
          metricsUrl: e.system.metrics?.url,
          envFile: o.docker?.envFile,
          ...(o.logFile ? { logFile: o.logFile } : {}),
          ...(o.onProcessesChanged ? { onProcessesChanged: o.onProcessesChanged } : {}),
        })
      : new DockerLab({
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
  refuse: refuseOnDocker,
  undo: { docker: runDockerUndo, 'compose-down': runComposeDown },
};
