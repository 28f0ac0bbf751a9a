import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChunkWriter, errors, resetString, toBase64, usage } from './wire.js';

const env = { id: 'chatcmpl-1', created: 1727889370, model: 'm', systemFingerprint: 'fp_1' };

const frame = (s: string): Record<string, unknown> => {
  assert.ok(s.startsWith('data: ') && s.endsWith('\n\n'));
  return JSON.parse(s.slice(6, -2)) as Record<string, unknown>;
};

test('stream frames carry OpenAI\'s envelope; "usage": null on every chunk only with include_usage', () => {
  const w = new ChunkWriter({ ...env, includeUsage: true });
  const role = frame(w.role());
  assert.deepEqual(Object.keys(role), [
    'id',
    'object',
    'created',
    'model',
    'system_fingerprint',
    'choices',
    'usage',
  ]);
  assert.equal(role['object'], 'chat.completion.chunk');
  assert.equal(role['usage'], null);
  assert.deepEqual(role['choices'], [
    {
      index: 0,
      delta: { role: 'assistant', content: '', refusal: null },
      logprobs: null,
      finish_reason: null,
    },
  ]);
  assert.deepEqual(frame(w.content(JSON.stringify(' he said "hi"')))['choices'], [
    { index: 0, delta: { content: ' he said "hi"' }, logprobs: null, finish_reason: null },
  ]);
  assert.deepEqual(frame(w.finish('stop'))['choices'], [
    { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
  ]);
  const u = frame(w.usage(usage(8, 9)));
  assert.deepEqual(u['choices'], []);
  assert.deepEqual(u['usage'], {
    prompt_tokens: 8,
    completion_tokens: 9,
    total_tokens: 17,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
  assert.equal(ChunkWriter.DONE, 'data: [DONE]\n\n');

  const plain = frame(new ChunkWriter({ ...env, includeUsage: false }).role());
  assert.equal('usage' in plain, false);
});

test("error bodies are OpenAI's", () => {
  assert.deepEqual(errors.contextLength(4097, 4294, undefined), {
    error: {
      message:
        "This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  });
  assert.match(
    errors.contextLength(4097, 3703, 500).error.message,
    /you requested 4203 tokens \(3703 in the messages, 500 in the completion\)/,
  );
  const rl = errors.rateLimit('gpt-4o-mini', 'tokens', 200000, 195869, 4412, '84ms').error;
  assert.equal(rl.type, 'tokens');
  assert.equal(rl.code, 'rate_limit_exceeded');
  assert.match(
    rl.message,
    /^Rate limit reached for gpt-4o-mini in organization org-\S+ on tokens per min \(TPM\): Limit 200000, Used 195869, Requested 4412\. Please try again in 84ms\./,
  );
  assert.deepEqual(errors.server().error, {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    param: null,
    code: null,
  });
});

test("reset durations read like OpenAI's, and base64 embeddings are little-endian float32", () => {
  assert.equal(resetString(12.4), '12ms');
  assert.equal(resetString(6500), '6.5s');
  assert.equal(resetString(62_000), '1m2s');
  const v = new Float32Array([0.5, -1.25, 3e-8]);
  const back = Buffer.from(toBase64(v), 'base64');
  assert.deepEqual(
    [0, 1, 2].map((i) => back.readFloatLE(i * 4)),
    Array.from(v),
  );
});
