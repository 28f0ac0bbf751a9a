import type { TriggerRecord } from '../analysis/summary.js';
import type { Annotation } from './client.js';

/**
 * The annotations of one run: its whole span (a region from start to end) and each
 * trigger's window, in epoch ms (`originEpochMs` is the run clock's zero).
 */
export function runAnnotations(x: {
  experiment: string;
  run: number;
  originEpochMs: number;
  endMs: number;
  triggers: readonly TriggerRecord[];
}): Annotation[] {
  const runTag = `run-${x.run}`;
  return [
    {
      time: x.originEpochMs,
      timeEnd: x.originEpochMs + x.endMs,
      tags: ['metabench', 'run', x.experiment, runTag],
      text: `${x.experiment} run ${x.run}`,
    },
    ...x.triggers.map((t) => ({
      time: x.originEpochMs + t.startMs,
      timeEnd: x.originEpochMs + Math.max(t.startMs, t.endMs),
      tags: ['metabench', 'trigger', t.kind, t.target, x.experiment, runTag],
      text: `${t.kind} ${t.target}${t.error ? ` (failed: ${t.error})` : ''}`,
    })),
  ];
}
