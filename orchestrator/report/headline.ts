import type { RunSummary } from '../analysis/summary.js';
import { isValid } from '../analysis/tally.js';
import type { ResultsData, RunData } from './load.js';
import {
  chooseRemedies,
  describeMachineLoad,
  remedyLines,
  type Remedy,
  type RemedyInput,
} from './remedies.js';

/**
 * What an invalid or interrupted run's report says first, after its outcome sentence: the
 * machine's load while it ran and the remedies that fit (remedies.ts), composed from the
 * run folder's files only (the report renders the same anywhere).
 */

/** What this module reads of run-<i>/manifest.json beyond the report's Manifest. */
interface ManifestRecorded {
  readonly command?: readonly string[];
  readonly experimentFile?: string | null;
  readonly pinning?: { readonly applied: boolean };
  readonly sweep?: { readonly file?: string; readonly point?: number };
}

/** The second at which an interrupted run stopped, from its summary's warning; null when it was not interrupted. */
export function interruptedAtS(s: Pick<RunSummary, 'warnings'>): number | null {
  for (const w of s.warnings) {
    const m = /\binterrupted at ([\d.]+) s\b/.exec(w);
    if (m) return Number(m[1]);
  }
  return null;
}

/**
 * The command that runs it again, as typed: the recorded command line without its `--out`
 * (a new folder; results are never overwritten); a sweep's point: the sweep resumed with
 * `--rerun-invalid`.
 */
export function rerunCommand(m: ManifestRecorded & { scale: number }): string {
  if (m.sweep)
    return `metabench sweep ${m.sweep.file ?? 'SWEEP.yaml'} --resume DIR --rerun-invalid (DIR: the sweep's folder, which holds point-${m.sweep.point ?? 'k'}/)`;
  const cmd = m.command;
  if (cmd && cmd[0] === 'run') {
    const kept: string[] = [];
    for (let i = 0; i < cmd.length; i++) {
      const a = cmd[i]!;
      if (a === '--out') i++;
      else if (!a.startsWith('--out=')) kept.push(/[\s'"$`\\]/.test(a) ? `'${a.replace(/'/g, "'\\''")}'` : a);
    }
    return `metabench ${kept.join(' ')}`;
  }
  return `metabench run ${m.experimentFile ?? 'FILE'}${m.scale !== 1 ? ` --scale ${m.scale}` : ''}`;
}

/** The remedies for one run of a results folder (its twin, when the folder has one). */
export function remediesFor(
  r: RunData,
  twin: ResultsData | null | undefined,
  failed: RemedyInput['failed'] = r.summary.validity?.failed ?? [],
): Remedy[] {
  const s = r.summary;
  const m = r.manifest as RunData['manifest'] & ManifestRecorded;
  const tw = twin?.runs.find((x) => x.index === r.index) ?? twin?.runs[0];
  return chooseRemedies({
    failed,
    machine: s.machine ?? null,
    runtime: m.runtime,
    pinned: m.pinning ? m.pinning.applied : null,
    cores: m.machine.cpus,
    rerun: rerunCommand(m),
    twinVerdict: tw ? (isValid(tw.summary) ? tw.summary.outcome : 'invalid') : null,
    triggerErrors: (s.triggers ?? []).flatMap((t) => [
      ...(t.error ? [`${t.kind} ${t.target} failed to apply: ${t.error}`] : []),
      ...(t.undoError ? [`undoing ${t.kind} ${t.target} failed: ${t.undoError}`] : []),
    ]),
    interrupted: interruptedAtS(s) !== null,
  });
}

/** "Machine load: …" for a run: its state when it ran, or that it was not recorded. */
export function machineLoadLine(s: RunSummary): string {
  return `Machine load: ${describeMachineLoad(s.machine ?? null)}.`;
}

/** The lines after an invalid (or interrupted) run's failed checks: the machine's load, then the remedies. */
export function invalidRunDetail(r: RunData, twin: ResultsData | null | undefined): string[] {
  return ['', machineLoadLine(r.summary), '', ...remedyLines(remediesFor(r, twin))];
}

/**
 * The lead sentence of an interrupted run: the interruption first, whatever checks it then
 * failed (they follow from stopping early); `outcome`: the run's own sentence, kept after it
 * when the run was still valid.
 */
export function interruptedSentence(s: RunSummary, atS: number, outcome: string): string {
  const failed = s.validity?.failed.length ?? 0;
  if (isValid(s)) return `**Interrupted at ${atS} s**, before its schedule ended. ${outcome}`;
  return `**Interrupted at ${atS} s**, before its schedule ended: no verdict is given${failed > 0 ? `; the ${failed} validity check${failed === 1 ? '' : 's'} below failed because the run stopped early, not because of the lab` : ''}.`;
}

/**
 * Several runs: each invalid run's machine load, then the remedies for every check any of
 * them failed (the first invalid run's context: its command, pinning, twin).
 */
export function invalidRunsDetail(runs: readonly RunData[], twin: ResultsData | null | undefined): string[] {
  const invalid = runs.filter((r) => !isValid(r.summary) || interruptedAtS(r.summary) !== null);
  if (invalid.length === 0) return [];
  const failed = invalid.flatMap((r) => r.summary.validity?.failed ?? []);
  return [
    '',
    ...invalid.map(
      (r) => `- run ${r.index}, machine load: ${describeMachineLoad(r.summary.machine ?? null)}`,
    ),
    '',
    ...remedyLines(remediesFor(invalid[0]!, twin, failed)),
  ];
}
