import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import type { PlannedCapacity } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';

/** What the exports read from a run's manifest.json (orchestrator/run/runOnce.ts writes it). */
export interface RunManifest {
  readonly metabench: string;
  readonly gitRevision: string | null;
  readonly startedAt: string;
  readonly machine?: {
    cpuModel: string;
    cpus: number;
    memoryBytes: number;
    os: string;
    node: string;
  };
  readonly runtime: string;
  readonly topology?: {
    components?: { name: string; config?: Record<string, unknown> }[];
  };
  readonly run: number;
  readonly seed: number;
  readonly scale: number;
  readonly capacity: PlannedCapacity;
  readonly plan?: {
    ratePerS?: number | null;
    triggers?: { kind: string; target?: string; atMs: number; durationMs?: number }[];
  };
  readonly experiment: Experiment;
  readonly command: readonly string[] | null;
  readonly experimentFile: string | null;
  readonly overrides?: readonly string[];
}

/**
 * run-<n>/manifest.json of an experiment's results folder, checked for the fields the
 * exports rely on: a missing or foreign file is a clear error naming it, not a crash.
 */
export function readRunManifest(dir: string, run = 1): RunManifest {
  const file = join(dir, `run-${run}`, 'manifest.json');
  if (!existsSync(file))
    throw new BenchError(
      'E_USAGE',
      `${dir}: not an experiment's results folder (no run-${run}/manifest.json)`,
    );
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new BenchError('E_USAGE', `${file}: not JSON (${(err as Error).message})`);
  }
  for (const key of ['metabench', 'runtime', 'scale', 'seed', 'capacity', 'experiment'])
    if (m[key] === undefined || m[key] === null) throw new BenchError('E_USAGE', `${file}: ${key}: missing`);
  const e = m.experiment as Partial<Experiment>;
  if (typeof e.name !== 'string' || typeof e.schedule !== 'object')
    throw new BenchError('E_USAGE', `${file}: experiment: not a resolved experiment (no name or schedule)`);
  return {
    ...(m as unknown as RunManifest),
    gitRevision: (m.gitRevision as string | null | undefined) ?? null,
    command: (m.command as string[] | undefined) ?? null,
    experimentFile: (m.experimentFile as string | undefined) ?? null,
  };
}
