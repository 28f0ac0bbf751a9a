import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { reanalyse } from '../../orchestrator/report/reanalyse.js';
import { gitRevision } from '../../orchestrator/results/manifest.js';
import { RECORD_FILE } from '../../orchestrator/results/record.js';
import { sideSummary, type Row, type SideResult } from './rows.js';
import { planChange, simulateSide } from './runs.js';
import { isStored, storedRun, type AgreementStore } from './store.js';

/**
 * The agreement again from the store alone (issue 32, point 7): each stored lab run
 * analysed again from its record by the same reanalyse() as `metabench report DIR`
 * (orchestrator/report/reanalyse.ts), and each modelled experiment simulated again by this
 * revision's simulator. Nothing is written: `--reanalyse` writes the result, `--check`
 * compares it with what is committed.
 */
export async function reanalyseStore(
  root: string,
  store: string,
  s: AgreementStore,
): Promise<AgreementStore> {
  const rows: Record<string, Row> = {};
  for (const [name, row] of Object.entries(s.rows)) {
    const again: Row = { ...row };
    delete again.labPlanChanged;
    if (!existsSync(join(root, row.file))) {
      // Nothing to simulate or compare the plan with: the row stays as stored, and says so.
      again.labPlanChanged = `${row.file} is no longer in the catalogue`;
      rows[name] = again;
      continue;
    }
    if (row.lab && isStored(store, name)) {
      const r = reanalyse(storedRun(store, name), []);
      const run = r.runs[0]!;
      again.lab = { ...row.lab, summary: sideSummary(run.summary) };
      const changed = planChange(root, row.file, run.record.plan);
      if (changed !== null) again.labPlanChanged = changed;
    }
    if (row.cannotModel === null) again.sim = await simulateSide(root, row.file);
    rows[name] = again;
  }
  return { ...s, rows, reanalysedBy: { revision: gitRevision(), at: new Date().toISOString() } };
}

/** What a side's run is called in a message. */
function source(store: string, name: string, side: 'lab' | 'sim'): string {
  return side === 'lab'
    ? `re-analysing ${join(storedRun(store, name), 'run-1', RECORD_FILE)} gives`
    : "this revision's simulator gives";
}

/** The paths (a.b.0.c) at which two JSON values differ, with both values. */
function differences(a: unknown, b: unknown, at = ''): { path: string; was: unknown; now: unknown }[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differences(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        at ? `${at}.${k}` : k,
      ),
    );
  }
  return [{ path: at || '(all)', was: a, now: b }];
}

const show = (x: unknown): string => (x === undefined ? '(nothing)' : JSON.stringify(x));

/**
 * Where `again` (the store re-analysed and re-simulated) differs from `stored` (what
 * store.json says), one line per figure, each naming the experiment and the side.
 */
export function compareStores(store: string, stored: AgreementStore, again: AgreementStore): string[] {
  const file = join(store, 'store.json');
  const out: string[] = [];
  for (const [name, row] of Object.entries(again.rows)) {
    const was = stored.rows[name];
    if (!was) {
      out.push(`${name}: not in ${file}`);
      continue;
    }
    for (const side of ['lab', 'sim'] as const) {
      const a: SideResult | undefined = was[side];
      const b: SideResult | undefined = row[side];
      if (!b) continue;
      if (b.error !== null && (a?.error ?? null) === null) {
        out.push(`${name} (${side}): ${source(store, name, side)} an error: ${b.error}`);
        continue;
      }
      for (const d of differences(a?.summary ?? null, b.summary))
        out.push(
          `${name} (${side}): ${d.path}: ${file} says ${show(d.was)}, ${source(store, name, side)} ${show(d.now)}`,
        );
    }
    if ((was.labPlanChanged ?? null) !== (row.labPlanChanged ?? null))
      out.push(
        `${name}: ${row.labPlanChanged ?? 'the lab ran the experiment as this revision plans it'}; ${file} ${was.labPlanChanged === undefined ? 'does not say so' : `says: ${was.labPlanChanged}`}`,
      );
  }
  return out;
}
