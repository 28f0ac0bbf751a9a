import { BenchError, SpecError } from '../../foundation/errors.js';
import type { Override } from '../../foundation/overrides.js';
import { loadExperimentFile } from '../spec/load.js';
import { triggerKind, triggerKinds } from '../trigger/registry.js';
import type { MagnitudeAxis } from './map.js';

/** The axis unit of a magnitude field. */
const UNITS: Readonly<Record<string, string>> = { factor: 'x', to: 'workers', probability: 'fraction' };

/**
 * `metabench model FILE --magnitudes LIST`: the map's second axis, the magnitude of the file's
 * single trigger (the field its kind names: slowdown's factor, workers' to, loss's
 * probability, load-spike's factor). Each value is checked as the file would be with it
 * written there (the kind's own schema and checks, e.g. a pool below lab.api.workers), so a
 * value the kind refuses is refused here with the kind's words.
 */
export function magnitudeAxis(
  file: string,
  sets: readonly Override[],
  written: readonly string[],
): MagnitudeAxis & { readonly kind: string } {
  const e = loadExperimentFile(file, sets);
  const t = e.schedule.triggers[0];
  if (e.schedule.writtenAs !== 'trigger' || !t)
    throw new BenchError(
      'E_USAGE',
      `--magnitudes varies one trigger's magnitude: give ${file} a single \`trigger:\``,
    );
  const field = triggerKind(t.kind).magnitude;
  if (!field)
    throw new BenchError(
      'E_USAGE',
      `--magnitudes: ${file}'s trigger is a ${t.kind}, which has no magnitude to vary (the kinds with one: ${triggerKinds()
        .filter((k) => k.magnitude)
        .map((k) => `${k.kind} (${k.magnitude})`)
        .join(', ')}); vary its duration with --durations`,
    );
  const values = written.map((s) => {
    // A bare number stays a number (workers' `to: 4`), as YAML would read it.
    const value: string | number = /^\d+(\.\d+)?$/.test(s) ? Number(s) : s;
    let parsed: unknown;
    try {
      const ex = loadExperimentFile(file, [
        ...sets,
        { path: ['schedule', 'trigger', field], value, source: `--magnitudes ${s}` },
      ]);
      parsed = (ex.schedule.triggers[0] as unknown as Record<string, unknown>)[field];
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      const why = err.issues.map((i) => i.message.replace(/ \(from --magnitudes [^)]*\)$/, '')).join('; ');
      throw new BenchError('E_USAGE', `--magnitudes: "${s}" is not a ${t.kind} ${field}: ${why}`);
    }
    if (typeof parsed !== 'number')
      throw new BenchError('E_USAGE', `--magnitudes: ${t.kind}'s ${field} is not a number the map can draw`);
    return { written: value, value: parsed };
  });
  const seen = new Set<number>();
  for (const v of values) {
    if (seen.has(v.value))
      throw new BenchError('E_USAGE', `--magnitudes: ${v.written} is given twice (${field} ${v.value})`);
    seen.add(v.value);
  }
  return { kind: t.kind, field, name: `${t.kind} ${field}`, unit: UNITS[field] ?? 'as written', values };
}
