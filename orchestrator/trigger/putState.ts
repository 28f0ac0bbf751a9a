import { BenchError } from '../../foundation/errors.js';

/**
 * PUTs `body` as JSON to a run-time switch of the lab (the api's /_api/state, the LLM stub's
 * /_stub/state); anything but 200 is an error naming `who` and what it refused.
 */
export async function putState(url: string, body: unknown, who: string, what: string): Promise<void> {
  // undici is imported here: the trigger kinds load with every experiment file, a PUT is rare.
  const { request } = await import('undici');
  const res = await request(url, {
    method: 'PUT',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
    headersTimeout: 5000,
    bodyTimeout: 5000,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200)
    throw new BenchError('E_LAB', `${who} (${url}) refused to ${what}: ${res.statusCode} ${text.trim()}`);
}
