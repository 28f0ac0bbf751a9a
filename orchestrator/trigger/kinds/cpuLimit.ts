import { z } from 'zod';
import type { Lab } from '../../lab/Lab.js';
import { defineTrigger, target, timing } from '../kind.js';
import { labWith } from '../labMethods.js';

const able = (lab: Lab) =>
  labWith(lab, ['limitCpu', 'unlimitCpu', 'cpuLimitUndoRecipe'], 'cannot set a CPU quota');

/**
 * A real CPU quota on a component for the window: on the local runtime a cgroup of its own
 * (cpu.cfs_quota_us on cgroup v1, cpu.max on v2; refused, naming why, where the machine
 * does not allow one). It bites on servers that compute (Postgres, Redis, a JVM's
 * collector); the built-in api's work is a timer and is not slowed by it.
 */
export const cpuLimit = defineTrigger({
  kind: 'cpu-limit',
  schema: z.strictObject({
    kind: z.literal('cpu-limit'),
    target,
    /** Cores the component may use, e.g. 0.5. */
    cpus: z.number().positive().max(1024),
    ...timing,
  }),
  summary:
    "A real CPU quota of `cpus` cores on the component (its own cgroup: cpu.cfs_quota_us or cpu.max); it bites on servers that compute, not on the api's timer work.",
  acts: 'cpu',
  magnitude: 'cpus',
  target: (t) => t.target,
  describe: (t, d) => `limit ${t.target} to ${t.cpus} CPU for ${d}`,
  create: (t) => ({
    kind: 'cpu-limit',
    target: t.target,
    describe: () => `limit ${t.target} to ${t.cpus} CPU`,
    undoRecipe: (lab) => able(lab).cpuLimitUndoRecipe(t.target),
    apply: (lab) => able(lab).limitCpu(t.target, t.cpus),
    undo: (lab) => able(lab).unlimitCpu(t.target),
  }),
});
