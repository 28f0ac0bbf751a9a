import { InvalidArgumentError } from 'commander';

/**
 * The runtimes a lab can run on: `local` (child processes on loopback), `docker` (the
 * Docker Compose lab) and `sim` (a discrete-event simulation of the same lab in virtual
 * time, sim/); a new runtime is one name here and one RuntimePlugin registered by the
 * composition root (orchestrator/cli/runtimes.ts). Sweep files (`runtime:`) and
 * `--runtime` on run, sweep and calibrate accept exactly these names, and manifest.json
 * records the one used.
 */
export const RUNTIMES = ['local', 'docker', 'sim', 'swarm'] as const;
export type Runtime = (typeof RUNTIMES)[number];
export const DEFAULT_RUNTIME: Runtime = 'local';

/** `--runtime <name>` on a command: validated against RUNTIMES (exit code 2 otherwise). */
export function parseRuntime(v: string): Runtime {
  if (!(RUNTIMES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`--runtime takes one of ${RUNTIMES.join(', ')} (got "${v}")`);
  return v as Runtime;
}
