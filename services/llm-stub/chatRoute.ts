import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { commonFault, errorLater, rateLimited } from './faultReplies.js';
import { requestRng, type Decision } from './faults.js';
import { planResponse } from './latency.js';
import { later, sendError, sendJson } from './respond.js';
import { stream } from './streaming.js';
import { openaiHeaders, type Count, type StubContext } from './stubContext.js';
import { answerTokens, promptTokens } from './tokens.js';
import { ChunkWriter, completion, errors, usage, type ApiErrorBody } from './wire.js';

/**
 * POST /v1/chat/completions: validated as OpenAI does, the context window and the
 * rate-limit window checked, then the request's fate (a fault, or an answer after its
 * planned latency, streamed or whole).
 */
export function chat(
  ctx: StubContext,
  body: Record<string, unknown>,
  key: string,
  d: Decision,
  res: ServerResponse,
  count: Count,
): void {
  const p = ctx.profile;
  const t0 = performance.now();
  const req = parseChat(body);
  if (typeof req === 'string' || 'error' in req) {
    count('bad_request');
    return sendError(res, 400, typeof req === 'string' ? errors.missing(req) : req);
  }
  const model = req.model;
  const prompt = promptTokens(req.messages);
  if (prompt + (req.maxTokens ?? 0) > p.contextWindow) {
    count('context_length');
    return errorLater(ctx, res, 400, () => errors.contextLength(p.contextWindow, prompt, req.maxTokens));
  }
  const plan = planResponse(
    p,
    { promptTokens: prompt, maxTokens: req.maxTokens, slowFactor: ctx.state.slowFactor },
    requestRng(ctx.seed, key, 'latency'),
  );
  const quota = ctx.window.admit(performance.now(), prompt + plan.outputTokens);
  if (quota) {
    count('rate_limited');
    return rateLimited(ctx, res, model, quota.kind, quota.retryMs, prompt + plan.outputTokens);
  }
  if (commonFault(ctx, d, res, count, model, prompt + plan.outputTokens, false)) return;
  if (d.fate === 'context_length') {
    count('context_length');
    return errorLater(ctx, res, 400, () => errors.contextLength(p.contextWindow, prompt, req.maxTokens));
  }
  const tokens = answerTokens(requestRng(ctx.seed, key, 'text'), plan.outputTokens);
  const env = {
    id: `chatcmpl-${randomBytes(15).toString('base64url')}`,
    created: Math.floor(Date.now() / 1000),
    model,
    systemFingerprint: p.systemFingerprint,
    includeUsage: req.includeUsage,
  };
  const cutAfter = d.fate === 'cut' ? Math.floor(d.cutAt * plan.outputTokens) : -1;
  if (req.stream) return stream(ctx, res, t0, plan, tokens, new ChunkWriter(env), prompt, cutAfter, count);
  const total = plan.ttftMs + plan.gapsMs.reduce((s, g) => s + g, 0);
  if (cutAfter >= 0) {
    count('cut');
    return later(res, total * d.cutAt, () => res.socket?.destroy());
  }
  later(res, total, () => {
    count('ok');
    ctx.metrics.outputTokens.inc(plan.outputTokens);
    sendJson(
      res,
      200,
      completion(env, tokens.join(''), plan.finishReason, usage(prompt, plan.outputTokens)),
      openaiHeaders(ctx, performance.now() - t0),
    );
  });
}

interface ChatRequest {
  model: string;
  messages: readonly unknown[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
}

/** The fields the stub reads, or the missing parameter's name, or an error body. */
function parseChat(b: Record<string, unknown>): ChatRequest | string | ApiErrorBody {
  if (b['model'] === undefined) return 'model';
  if (typeof b['model'] !== 'string') return errors.invalid('model', "'model' must be a string.");
  if (b['messages'] === undefined) return 'messages';
  const messages = b['messages'];
  if (!Array.isArray(messages) || messages.length === 0)
    return errors.invalid(
      'messages',
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
    );
  const stream = b['stream'] === true;
  const so = b['stream_options'];
  if (so !== undefined && so !== null && !stream)
    return errors.invalid(
      'stream_options',
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
    );
  const includeUsage = (so as { include_usage?: unknown } | null | undefined)?.include_usage === true;
  const mt = b['max_completion_tokens'] ?? b['max_tokens'];
  if (mt !== undefined && mt !== null && !(Number.isInteger(mt) && (mt as number) >= 1))
    return errors.invalid(
      b['max_completion_tokens'] !== undefined ? 'max_completion_tokens' : 'max_tokens',
      `Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got ${JSON.stringify(mt)} instead.`,
    );
  return {
    model: b['model'],
    messages,
    stream,
    includeUsage,
    maxTokens: mt === undefined || mt === null ? undefined : (mt as number),
  };
}
