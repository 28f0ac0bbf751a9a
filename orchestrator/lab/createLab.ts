import type { Experiment } from '../spec/schema.js';
import type { Lab } from './Lab.js';
import { localLabConfig } from './labConfig.js';
import { LocalLab } from './local/LocalLab.js';
import type { Runtime } from './runtimes.js';
import { DockerLab } from './docker/DockerLab.js';
import { DEFAULT_PROJECT, type ComposeOptions } from './docker/compose.js';

/** The lab of an experiment on a runtime (one case per name of RUNTIMES). */
export function createLab(
  runtime: Exclude<Runtime, 'sim'>,
  e: Experiment,
  opts: {
    seed: number;
    logFile?: string;
    /** Called whenever the lab's processes change (to journal its teardown recipe). */
    onProcessesChanged?: () => void;
    /** docker: the compose project (default: the default project). */
    docker?: ComposeOptions;
  },
): Lab {
  switch (runtime) {
    case 'local':
      return new LocalLab(localLabConfig(e, opts));
    case 'docker':
      return new DockerLab({
        ...localLabConfig(e, opts),
        compose: opts.docker ?? { project: DEFAULT_PROJECT },
      });
  }
}
