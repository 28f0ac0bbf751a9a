import type { Experiment } from '../spec/schema.js';
import type { Lab } from './Lab.js';
import { localLabConfig } from './labConfig.js';
import { LocalLab } from './local/LocalLab.js';
import type { Runtime } from './runtimes.js';

/** The lab of an experiment on a runtime (one case per name of RUNTIMES). */
export function createLab(
  runtime: Runtime,
  e: Experiment,
  opts: {
    seed: number;
    logFile?: string;
    /** Called whenever the lab's processes change (to journal its teardown recipe). */
    onProcessesChanged?: () => void;
  },
): Lab {
  switch (runtime) {
    case 'local':
      return new LocalLab(localLabConfig(e, opts));
  }
}
