import type { ServerResponse } from 'node:http';
import type { Decision } from './faults.js';
import { later, sendError, sendJson } from './respond.js';
import { openaiHeaders, type Count, type StubContext } from './stubContext.js';
import { errors, resetString, type ApiErrorBody } from './wire.js';

/**
 * Fault injection's answers: an error after the network floor, a 429 with the window's
 * figures, and the fates every endpoint shares (hang, rate limit, server error).
 */

/** An error after the network floor (a provider's errors are not instant), unless the client left. */
export function errorLater(
  ctx: StubContext,
  res: ServerResponse,
  status: number,
  bodyOf: () => ApiErrorBody,
  extra: Record<string, string> = {},
): void {
  const t0 = performance.now();
  later(res, ctx.profile.ttft.floor * ctx.state.slowFactor, () => {
    sendError(res, status, bodyOf(), { ...openaiHeaders(ctx, performance.now() - t0), ...extra });
  });
}

export function rateLimited(
  ctx: StubContext,
  res: ServerResponse,
  model: string,
  kind: 'requests' | 'tokens',
  retryMs: number,
  requested: number,
): void {
  const w = ctx.window.snapshot(performance.now());
  const limit = kind === 'tokens' ? w.tokenLimit : w.requestLimit;
  const used = kind === 'tokens' ? w.tokenLimit - w.tokensLeft : w.requestLimit - w.requestsLeft;
  errorLater(
    ctx,
    res,
    429,
    () => errors.rateLimit(model, kind, limit, used, requested, resetString(retryMs)),
    {
      'retry-after': String(Math.ceil(retryMs / 1000)),
      'retry-after-ms': String(Math.round(retryMs)),
    },
  );
}

/** The fates every endpoint shares; true when one of them answered. */
export function commonFault(
  ctx: StubContext,
  d: Decision,
  res: ServerResponse,
  count: Count,
  model: string,
  requested: number,
  ollama: boolean,
): boolean {
  const floorMs = ctx.profile.ttft.floor * ctx.state.slowFactor;
  if (d.fate === 'hang') {
    count('hang'); // held open until the client gives up or the stub stops
    return true;
  }
  if (d.fate === 'rate_limit') {
    count('rate_limited');
    if (ollama)
      later(res, floorMs, () =>
        sendJson(res, 503, { error: 'server busy, please try again.  maximum pending requests exceeded' }),
      );
    else rateLimited(ctx, res, model, 'tokens', ctx.profile.rateLimits.retryAfter, requested);
    return true;
  }
  if (d.fate === 'server_error') {
    count('server_error');
    if (ollama)
      later(res, floorMs, () => sendJson(res, 500, { error: 'llama runner process has terminated' }));
    else errorLater(ctx, res, 500, errors.server);
    return true;
  }
  return false;
}
