import { request } from 'undici';
import { BenchError } from '../../foundation/errors.js';
import type { Target } from './Lab.js';
import { targetOf } from './target.js';

/**
 * The api's Prometheus text from its /metrics (the one component with metrics), for any
 * runtime that reaches it over HTTP: `api[i]` from replica i, `api` from replica 0.
 */
export async function scrapeApiText(
  apiUrls: readonly string[],
  t: Target,
  timeoutMs: number,
): Promise<string> {
  const { component, replica = 0 } = targetOf(t);
  if (component !== 'api') throw new BenchError('E_LAB', `component "${component}" has no metrics`);
  const url = apiUrls[replica];
  if (url === undefined) throw new BenchError('E_LAB', `this lab has no api replica ${replica}`);
  const res = await request(`${url}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  return res.body.text();
}
