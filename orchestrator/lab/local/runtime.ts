import { join } from 'node:path';
import { SpecError } from '../../../foundation/errors.js';
import { localLabConfig } from '../labConfig.js';
import { realRuntime } from '../realRuntime.js';
import { everyTriggerBut, type RuntimePlugin } from '../RuntimePlugin.js';
import { LocalLab } from './LocalLab.js';
import { SystemLab } from './SystemLab.js';

/** The local runtime: the lab as child processes on loopback. */
export const localRuntime: RuntimePlugin = {
  name: 'local',
  capabilities: {
    // Every kind through the Lab interface, and kinds that act on this machine (a file, a command);
    // its processes share the host's loopback, so there is no container interface for netem.
    triggers: everyTriggerBut('interface'),
    virtualTime: false,
    compose: false,
    labOnThisMachine: true,
    apiLink: true,
  },
  // Your own system, or the built-in lab.
  lab: (e, o) =>
    e.system
      ? new SystemLab(e.system, {
          seed: o.seed,
          logFile: o.logFile,
          onProcessesChanged: o.onProcessesChanged,
        })
      : new LocalLab(localLabConfig(e, o)),
  // Your own compose file needs a Docker engine: the docker runtime runs it.
  refuse: (e, file) => {
    if (e.system?.compose)
      throw new SpecError([
        {
          file: file ?? `experiment ${e.name}`,
          path: 'system.compose',
          message:
            'your own compose file runs on the docker runtime (--runtime docker); on the local runtime give its components as system.processes',
        },
      ]);
  },
  run: (plan, dir, o) =>
    realRuntime(plan, () =>
      localRuntime.lab!(plan.experiment, {
        seed: plan.seed,
        logFile: join(dir, 'lab.log'),
        ...(o.onProcessesChanged ? { onProcessesChanged: o.onProcessesChanged } : {}),
        ...(o.pin !== undefined ? { pin: o.pin } : {}),
      }),
    ),
};
