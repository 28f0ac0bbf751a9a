import type { ServerResponse } from 'node:http';
import { embedText, embeddingInputs } from './embeddings.js';
import { commonFault, rateLimited } from './faultReplies.js';
import { requestRng, type Decision } from './faults.js';
import { embeddingMs } from './latency.js';
import { later, sendError, sendJson } from './respond.js';
import { openaiHeaders, type Count, type StubContext } from './stubContext.js';
import { errors, toBase64, type ApiErrorBody } from './wire.js';

/** The embeddings endpoints: OpenAI's POST /v1/embeddings and Ollama's POST /api/embed and /api/embeddings. */
export type EmbeddingsEndpoint = 'embeddings' | 'ollama_embed' | 'ollama_embeddings';

/** An embeddings request: validated, rate-limited (OpenAI's), then its fate or its vectors after the planned time. */
export function embeddings(
  ctx: StubContext,
  endpoint: EmbeddingsEndpoint,
  body: Record<string, unknown>,
  key: string,
  d: Decision,
  res: ServerResponse,
  count: Count,
): void {
  const p = ctx.profile;
  const t0 = performance.now();
  const ollama = endpoint !== 'embeddings';
  const model = typeof body['model'] === 'string' ? body['model'] : undefined;
  const rawInput = endpoint === 'ollama_embeddings' ? body['prompt'] : body['input'];
  const bad = (openai: ApiErrorBody, ollamaMessage: string): void => {
    count('bad_request');
    if (ollama) sendJson(res, 400, { error: ollamaMessage });
    else sendError(res, 400, openai);
  };
  if (!model) return bad(errors.missing('model'), 'model is required');
  if (rawInput === undefined)
    return bad(
      errors.missing('input'),
      endpoint === 'ollama_embeddings' ? 'prompt is required' : 'input is required',
    );
  const inputs = embeddingInputs(rawInput);
  if (typeof inputs === 'string') return bad(errors.invalid('input', inputs), inputs);
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64')
    return bad(
      errors.invalid('encoding_format', "'encoding_format' must be 'float' or 'base64'"),
      'bad encoding_format',
    );
  const dimsRaw = body['dimensions'];
  const dims = dimsRaw === undefined ? p.embeddings.dimensions : Number(dimsRaw);
  if (!Number.isInteger(dims) || dims < 1 || dims > p.embeddings.dimensions)
    return bad(
      errors.invalid(
        'dimensions',
        `'dimensions' must be a whole number from 1 to ${p.embeddings.dimensions}`,
      ),
      'bad dimensions',
    );
  if (!ollama) {
    const quota = ctx.window.admit(performance.now(), inputs.tokens);
    if (quota) {
      count('rate_limited');
      return rateLimited(ctx, res, model, quota.kind, quota.retryMs, inputs.tokens);
    }
  }
  if (commonFault(ctx, d, res, count, model, inputs.tokens, ollama)) return;
  const ms = embeddingMs(p, inputs.tokens, requestRng(ctx.seed, key, 'latency'), ctx.state.slowFactor);
  if (d.fate === 'cut') {
    count('cut');
    return later(res, ms * d.cutAt, () => res.socket?.destroy());
  }
  // context_length by rate does not apply to embeddings: answered normally.
  later(res, ms, () => {
    count('ok');
    const vectors = inputs.texts.map((t) => embedText(t, dims));
    if (endpoint === 'ollama_embeddings') return sendJson(res, 200, { embedding: Array.from(vectors[0]!) });
    if (endpoint === 'ollama_embed') {
      const ns = Math.round((performance.now() - t0) * 1e6);
      return sendJson(res, 200, {
        model,
        embeddings: vectors.map((v) => Array.from(v)),
        total_duration: ns,
        load_duration: 0,
        prompt_eval_count: inputs.tokens,
      });
    }
    sendJson(
      res,
      200,
      {
        object: 'list',
        data: vectors.map((v, index) => ({
          object: 'embedding',
          index,
          embedding: format === 'base64' ? toBase64(v) : Array.from(v),
        })),
        model,
        usage: { prompt_tokens: inputs.tokens, total_tokens: inputs.tokens },
      },
      openaiHeaders(ctx, performance.now() - t0),
    );
  });
}
