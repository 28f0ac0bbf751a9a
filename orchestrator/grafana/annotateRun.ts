import { runAnnotations } from './annotations.js';
import { GrafanaClient } from './client.js';

/** Posts a run's annotations (its span and trigger windows); returns how many. */
export async function annotateRun(url: string, run: Parameters<typeof runAnnotations>[0]): Promise<number> {
  const client = new GrafanaClient(url);
  const all = runAnnotations(run);
  for (const a of all) await client.annotate(a);
  return all.length;
}
