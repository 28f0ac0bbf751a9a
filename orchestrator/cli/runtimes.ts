import { dockerRuntime } from '../lab/docker/runtime.js';
import { localRuntime } from '../lab/local/runtime.js';
import { registerRuntime, type RuntimePlugin } from '../lab/RuntimePlugin.js';
import { swarmRuntime } from '../lab/swarm/runtime.js';
import { simPlugin } from '../../sim/runtime.js';

/**
 * The composition root's list of runtimes: the one place that names their implementations
 * (a new runtime is one plugin here and its name in lab/runtimes.ts). Whatever
 * runs an experiment without the CLI (a test, a benchmark) calls registerRuntimes() first.
 */
export const RUNTIME_PLUGINS: readonly RuntimePlugin[] = [
  localRuntime,
  dockerRuntime,
  simPlugin,
  swarmRuntime,
];

export function registerRuntimes(): void {
  for (const p of RUNTIME_PLUGINS) registerRuntime(p);
}
