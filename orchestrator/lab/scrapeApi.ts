import { request } from 'undici';
import { BenchError } from '../../foundation/errors.js';
import type { Component } from './Lab.js';

/** The Prometheus text of the /metrics under `baseUrl`; rejects when it does not answer within `timeoutMs`. */
export async function scrapeUrlText(baseUrl: string, timeoutMs: number): Promise<string> {
  const res = await request(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  return res.body.text();
}

/** The api's Prometheus text from its /metrics (the one component with metrics), for any runtime that reaches it over HTTP. */
export async function scrapeApiText(apiUrl: string, c: Component, timeoutMs: number): Promise<string> {
  if (c !== 'api') throw new BenchError('E_LAB', `component "${c}" has no metrics`);
  return scrapeUrlText(apiUrl, timeoutMs);
}
