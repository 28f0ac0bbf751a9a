import { request } from 'undici';
import { BenchError } from '../../foundation/errors.js';
import type { Component } from './Lab.js';

/**
 * A component's Prometheus text from its /metrics, for any runtime that reaches its
 * components over HTTP: the api's, and the llm stub's on the stub's own address (not
 * through its link: a fault on the link is not a fault of the measurement).
 */
export async function scrapeLabText(
  lab: { readonly apiUrl: string; readonly llmUrl?: string | undefined },
  c: Component,
  timeoutMs: number,
): Promise<string> {
  const base = c === 'api' ? lab.apiUrl : c === 'llm' ? lab.llmUrl : undefined;
  if (base === undefined) throw new BenchError('E_LAB', `component "${c}" has no metrics in this lab`);
  const res = await request(`${base}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  return res.body.text();
}
