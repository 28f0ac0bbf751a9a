import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from './wire.js';

/** The stub's HTTP plumbing: reading a JSON body, answering JSON, answering later. */

const MAX_BODY = 16 << 20;

/** Calls fn after ms unless the client goes away first. */
export function later(res: ServerResponse, ms: number, fn: () => void): void {
  const t = setTimeout(fn, Math.max(0, ms));
  res.once('close', () => clearTimeout(t));
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** An OpenAI error body (typed, so every error answer has OpenAI's shape). */
export function sendError(
  res: ServerResponse,
  status: number,
  body: ApiErrorBody,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, body, headers);
}

export type JsonResult = { ok: true; value: Record<string, unknown> } | { ok: false; tooLarge: boolean };

/** The request's body as a JSON object (not an array or a scalar); over 16 MiB is too large. */
export function readJson(req: IncomingMessage): Promise<JsonResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) tooLarge = true;
      else chunks.push(c);
    });
    req.on('error', () => resolve({ ok: false, tooLarge }));
    req.on('end', () => {
      if (tooLarge) return resolve({ ok: false, tooLarge });
      try {
        const v: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (typeof v === 'object' && v !== null && !Array.isArray(v))
          resolve({ ok: true, value: v as Record<string, unknown> });
        else resolve({ ok: false, tooLarge: false });
      } catch {
        resolve({ ok: false, tooLarge: false });
      }
    });
  });
}
