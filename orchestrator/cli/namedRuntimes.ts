import { registerRuntime, type RuntimePlugin } from '../lab/RuntimePlugin.js';
import type { Runtime } from '../lab/runtimes.js';

/**
 * Each runtime's plugin, imported when a command names it: a simulated run need not load
 * the labs' HTTP, Docker and Postgres clients (a third of a second) to learn that it
 * runs in virtual time. One entry per runtime, or this does not compile.
 */
const PLUGINS: { readonly [R in Runtime]: () => Promise<RuntimePlugin> } = {
  local: async () => (await import('../lab/local/runtime.js')).localRuntime,
  docker: async () => (await import('../lab/docker/runtime.js')).dockerRuntime,
  sim: async () => (await import('../../sim/runtime.js')).simPlugin,
  swarm: async () => (await import('../lab/swarm/runtime.js')).swarmRuntime,
};

/** Registers the runtimes named, and no other (runtimes.ts registers them all). */
export async function registerNamedRuntimes(names: readonly Runtime[]): Promise<void> {
  for (const p of await Promise.all(names.map((n) => PLUGINS[n]()))) registerRuntime(p);
}
