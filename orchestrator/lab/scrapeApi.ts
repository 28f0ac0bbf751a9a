import { request } from 'undici';
import { BenchError } from '../../foundation/errors.js';
import type { Target } from './Lab.js';
import { targetOf } from './target.js';
import { within } from '../../foundation/within.js';

/**
 * A component's Prometheus text from its /metrics, for any runtime that reaches its
 * components over HTTP: the api's (`api[i]` from replica i, `api` from replica 0), and
 * the llm stub's on the stub's own address (not through its link: a fault on the link is
 * not a fault of the measurement).
 */
export async function scrapeLabText(
  lab: { readonly apiUrls: readonly string[]; readonly llmUrl?: string | undefined },
  t: Target,
  timeoutMs: number,
): Promise<string> {
  const { component, replica = 0 } = targetOf(t);
  let base: string | undefined;
  if (component === 'api') {
    base = lab.apiUrls[replica];
    if (base === undefined) throw new BenchError('E_LAB', `this lab has no api replica ${replica}`);
  } else if (component === 'llm') base = lab.llmUrl;
  if (base === undefined)
    throw new BenchError('E_LAB', `component "${component}" has no metrics in this lab`);
  return within(timeoutMs, async (signal) => (await request(`${base}/metrics`, { signal })).body.text());
}

/**
 * The Prometheus text at a system's declared endpoint (system.metrics), for the runtimes that
 * run a system metabench did not write: rejects when it does not answer 2xx within `timeoutMs`.
 */
export async function scrapeEndpoint(url: string, timeoutMs: number): Promise<string> {
  const [res, body] = await within(timeoutMs, async (signal) => {
    const r = await request(url, { signal });
    return [r, await r.body.text()] as const;
  });
  if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`${url} answered ${res.statusCode}`);
  return body;
}
