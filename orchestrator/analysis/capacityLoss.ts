import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan } from '../spec/plan.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import type { SustainingFigures } from './mechanisms.js';

/**
 * The figures of a loss of capacity over buckets [a, b) (the observation's tail), from
 * the server's series where the lab exports them: the database's connections busy and
 * requests waiting for one (`db_pool_busy`, `db_pool_waiting`, summed over replicas),
 * each replica's completions (`api<i>_completed`), and the time spent in garbage
 * collection (any `gc_seconds…` column). Absent series give null.
 */
export function capacityLossFigures(
  plan: RunPlan,
  server: ServerSeries | null,
  a: number,
  b: number,
  bucketS: number,
): Pick<SustainingFigures, 'dbBusyShare' | 'dbWaiting' | 'replicaCompleted' | 'gcShare' | 'seconds'> {
  const extra = server?.extra ?? {};
  const lab = plan.experiment.lab;
  const replicas = lab ? apiReplicaCount(lab.api) : 1;
  const seconds = (b - a) * bucketS;
  const mean = (arr: readonly (number | null)[] | undefined): number | null => {
    let s = 0;
    let n = 0;
    for (let i = a; i < b; i++) {
      const v = arr?.[i];
      if (v !== null && v !== undefined) {
        s += v;
        n++;
      }
    }
    return n > 0 ? s / n : null;
  };
  const total = (arr: readonly (number | null)[] | undefined): number | null => {
    const m = mean(arr);
    if (m === null) return null;
    let s = 0;
    for (let i = a; i < b; i++) s += arr?.[i] ?? 0;
    return s;
  };
  const pool = lab?.db?.pool;
  const busy = mean(extra['db_pool_busy']);
  const gcCols = Object.keys(extra).filter((c) => c.startsWith('gc_seconds'));
  const gcS = gcCols.reduce<number | null>((x, c) => {
    const t = total(extra[c]);
    return t === null ? x : (x ?? 0) + t;
  }, null);
  return {
    dbBusyShare: busy !== null && pool ? busy / (pool * replicas) : null,
    dbWaiting: mean(extra['db_pool_waiting']),
    replicaCompleted:
      replicas > 1 ? Array.from({ length: replicas }, (_, i) => total(extra[`api${i}_completed`])) : null,
    gcShare: gcS !== null && seconds > 0 ? gcS / (seconds * replicas) : null,
    seconds,
  };
}
