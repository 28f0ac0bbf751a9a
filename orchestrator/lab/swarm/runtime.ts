import { join } from 'node:path';
import { localLabConfig } from '../labConfig.js';
import { realRuntime } from '../realRuntime.js';
import { everyTriggerBut, type RuntimePlugin } from '../RuntimePlugin.js';
import { DEFAULT_PROJECT } from '../engine/compose.js';
import { refuseSwarm } from '../engine/refuse.js';
import { SwarmLab } from './SwarmLab.js';
import { runForwardedHttpUndo } from './undo.js';
import { builtinLab } from '../../spec/builtinLab.js';

/**
 * The swarm runtime: the docker lab deployed as a Docker Swarm stack (the stack is named as
 * the compose project: --project). Its fault journal's recipes are the docker runtime's
 * (an Engine API call on a container, on the engine of the node that runs it).
 */
export const swarmRuntime: RuntimePlugin = {
  name: 'swarm',
  capabilities: {
    // Every kind through the Lab interface, and kinds that act on the orchestrator's machine (a file, a command);
    // not netem: a task's container may run on another node, out of reach of this host's nsenter.
    triggers: everyTriggerBut('interface'),
    virtualTime: false,
    compose: true,
    labOnThisMachine: false,
    apiLink: true,
  },
  lab: (e, o) =>
    new SwarmLab({
      ...localLabConfig(e, o),
      compose: o.docker ?? { project: DEFAULT_PROJECT },
      placement: builtinLab(e, 'the swarm runtime').placement,
    }),
  run: (plan, dir, o) => {
    const rt = realRuntime(plan, () =>
      swarmRuntime.lab!(plan.experiment, {
        seed: plan.seed,
        logFile: join(dir, 'lab.log'),
        ...(o.onProcessesChanged ? { onProcessesChanged: o.onProcessesChanged } : {}),
        ...(o.docker ? { docker: o.docker } : {}),
      }),
    );
    // Tasks swarm replaces, or that stop running, while the run goes on: events.ndjson's swarm-task lines.
    const lab = rt.lab as SwarmLab;
    return { ...rt, watch: (clock, note) => lab.watchTasks(clock, note) };
  },
  // The same images and the same Postgres: the same limits on replicas.
  refuse: refuseSwarm,
  // A link's undo after a killed run: its fault proxy publishes nothing, so through the engine.
  undo: { 'http-forwarded': runForwardedHttpUndo },
};
