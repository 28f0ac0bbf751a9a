import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { checkRates, type FaultRates } from './faults.js';
import { readJson, sendJson } from './respond.js';
import type { StubState } from './stubContext.js';

const stateUpdate = z.strictObject({
  down: z.union([z.literal(false), z.enum(['reset', 'unavailable'])]).optional(),
  slowFactor: z.number().positive().max(1000).optional(),
  rates: z
    .strictObject({
      rateLimit: z.number().min(0).max(1).optional(),
      serverError: z.number().min(0).max(1).optional(),
      contextLength: z.number().min(0).max(1).optional(),
      cut: z.number().min(0).max(1).optional(),
      hang: z.number().min(0).max(1).optional(),
    })
    .optional(),
});

/** GET /_stub/state reads the switchable state; PUT (or POST) changes the fields it names. */
export async function stateRoute(state: StubState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET') return sendJson(res, 200, state);
  if (req.method !== 'PUT' && req.method !== 'POST') return sendJson(res, 405, { error: 'GET or PUT' });
  const body = await readJson(req);
  const r = stateUpdate.safeParse(body.ok ? body.value : undefined);
  if (!r.success)
    return sendJson(res, 400, {
      error: r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    });
  const rates: FaultRates = { ...state.rates, ...definedOnly(r.data.rates ?? {}) };
  const bad = checkRates(rates);
  if (bad) return sendJson(res, 400, { error: `rates: ${bad}` });
  if (r.data.down !== undefined) state.down = r.data.down;
  if (r.data.slowFactor !== undefined) state.slowFactor = r.data.slowFactor;
  state.rates = rates;
  sendJson(res, 200, state);
}

/** The fields of `o` that are set (an update's absent fields keep their values). */
function definedOnly<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
