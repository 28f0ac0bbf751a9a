/**
 * Where an experiment runs: `local` (the lab as child processes on loopback) or `sim`
 * (a discrete-event simulation of the same lab in virtual time, sim/). One list, used by
 * `--runtime` on run and sweep and by a sweep file's `runtime:`.
 */
export const RUNTIMES = ['local', 'sim'] as const;
export type Runtime = (typeof RUNTIMES)[number];
