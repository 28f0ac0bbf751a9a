import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionError, BadRequestError, InternalServerError, RateLimitError } from 'openai';
import { embedText } from '../../services/llm-stub/embeddings.js';
import { requestRng } from '../../services/llm-stub/faults.js';
import { planResponse } from '../../services/llm-stub/latency.js';
import { KEY_HEADER } from '../../services/llm-stub/server.js';
import { answerTokens, promptTokens } from '../../services/llm-stub/tokens.js';
import { runCli, startCli, tempDir } from '../helpers/cli.js';
import { fastProfile, fastStub, setStubState } from '../helpers/llmStub.js';

const SEED = 11;
const messages = [
  { role: 'system' as const, content: 'You are terse.' },
  { role: 'user' as const, content: 'Say something about queues.' },
];

function client(url: string): OpenAI {
  // The stub needs no key; the SDK insists on one being set.
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
}

/** What the stub answers to `key` with the fast profile: its text and token count. */
function expectedAnswer(key: string, maxTokens?: number): { text: string; tokens: number } {
  const plan = planResponse(
    fastProfile(),
    { promptTokens: promptTokens(messages), maxTokens },
    requestRng(SEED, key, 'latency'),
  );
  const tokens = answerTokens(requestRng(SEED, key, 'text'), plan.outputTokens);
  return { text: tokens.join(''), tokens: tokens.length };
}

test('openai SDK: a stream yields the expected text and usage, the role chunk first and [DONE] last', async () => {
  const stub = await fastStub();
  try {
    const oa = client(stub.url);
    const stream = await oa.chat.completions.create(
      { model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } },
      { headers: { [KEY_HEADER]: 'chat-1' } },
    );
    let text = '';
    let contentChunks = 0;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let first: OpenAI.ChatCompletionChunk | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      first ??= chunk;
      const c = chunk.choices[0];
      if (c?.delta.content) {
        text += c.delta.content;
        contentChunks++;
      }
      if (c?.finish_reason) finish = c.finish_reason;
      if (chunk.usage) usage = chunk.usage;
      else assert.equal(chunk.usage, null, 'every other chunk carries "usage": null');
    }
    const want = expectedAnswer('chat-1');
    assert.equal(text, want.text);
    assert.equal(first?.choices[0]?.delta.role, 'assistant');
    assert.equal(first?.model, 'gpt-4o-mini');
    assert.equal(finish, 'stop');
    assert.equal(contentChunks, want.tokens, 'one content chunk per token');
    assert.deepEqual(usage, {
      prompt_tokens: promptTokens(messages),
      completion_tokens: want.tokens,
      total_tokens: promptTokens(messages) + want.tokens,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });

    // Non-streaming, same key: the same answer in one body; max_tokens caps it with "length".
    const whole = await oa.chat.completions.create(
      { model: 'gpt-4o-mini', messages, max_tokens: 5 },
      { headers: { [KEY_HEADER]: 'chat-1' } },
    );
    assert.equal(whole.object, 'chat.completion');
    assert.equal(whole.choices[0]?.message.content, expectedAnswer('chat-1', 5).text);
    assert.equal(whole.choices[0]?.finish_reason, 'length');
    assert.equal(whole.usage?.completion_tokens, 5);
  } finally {
    await stub.close();
  }
});

test('without include_usage no chunk has a usage field; a raw stream ends with data: [DONE]; no key needed', async () => {
  const stub = await fastStub();
  try {
    const r = await fetch(`${stub.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages, stream: true }),
    });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(r.headers.get('x-ratelimit-remaining-requests') ?? '', /^\d+$/);
    const frames = (await r.text()).split('\n\n').filter((f) => f !== '');
    assert.equal(frames.at(-1), 'data: [DONE]');
    for (const f of frames.slice(0, -1)) {
      const chunk = JSON.parse(f.slice('data: '.length)) as Record<string, unknown>;
      assert.equal('usage' in chunk, false);
    }
  } finally {
    await stub.close();
  }
});

test('openai SDK: errors parse into its classes with the right status, code and headers', async () => {
  const stub = await fastStub({}, SEED, fastProfile({ contextWindow: 200 }));
  try {
    const oa = client(stub.url);
    // Too long a prompt: a real check against the profile's context window.
    const long = [{ role: 'user' as const, content: 'x'.repeat(4 * 300) }];
    const e400 = await oa.chat.completions.create({ model: 'm', messages: long }).catch((e: unknown) => e);
    assert.ok(e400 instanceof BadRequestError, String(e400));
    assert.equal(e400.status, 400);
    assert.equal(e400.code, 'context_length_exceeded');
    assert.equal(e400.param, 'messages');
    assert.equal(e400.type, 'invalid_request_error');

    await setStubState(stub.url, { rates: { rateLimit: 1 } });
    const e429 = await oa.chat.completions
      .create({ model: 'm', messages, stream: true })
      .catch((e: unknown) => e);
    assert.ok(e429 instanceof RateLimitError, String(e429));
    assert.equal(e429.status, 429);
    assert.equal(e429.code, 'rate_limit_exceeded');
    assert.equal(e429.type, 'tokens');
    assert.equal(e429.headers.get('retry-after'), '1');
    assert.equal(e429.headers.get('retry-after-ms'), '1000');
    assert.match(e429.headers.get('x-ratelimit-limit-tokens') ?? '', /^\d+$/);

    await setStubState(stub.url, { rates: { rateLimit: 0, serverError: 1 } });
    const e500 = await oa.embeddings.create({ model: 'e', input: 'hi' }).catch((e: unknown) => e);
    assert.ok(e500 instanceof InternalServerError, String(e500));
    assert.equal(e500.status, 500);
    assert.equal(e500.type, 'server_error');

    await setStubState(stub.url, { rates: { serverError: 0, contextLength: 1 } });
    const byRate = await oa.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    assert.ok(byRate instanceof BadRequestError);
    assert.equal(byRate.code, 'context_length_exceeded');

    await setStubState(stub.url, { rates: { contextLength: 0 }, down: 'unavailable' });
    const e503 = await oa.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    assert.ok(e503 instanceof InternalServerError);
    assert.equal(e503.status, 503);

    await setStubState(stub.url, { down: 'reset' });
    const reset = await oa.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    assert.ok(reset instanceof APIConnectionError, String(reset));

    await setStubState(stub.url, { down: false });
    const ok = await oa.chat.completions.create({ model: 'm', messages });
    assert.equal(ok.choices[0]?.finish_reason, 'stop');
  } finally {
    await stub.close();
  }
});

test('openai SDK: a stream cut mid-way is an error, not a clean end', async () => {
  const stub = await fastStub({ cut: 1 }, SEED, fastProfile({ outputTokens: 40 }));
  try {
    const stream = await client(stub.url).chat.completions.create({
      model: 'm',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let tokens = 0;
    let usage = false;
    const err = await (async () => {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) tokens++;
        if (chunk.usage) usage = true;
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error, 'the iteration must throw');
    assert.ok(tokens < 40, `only part of the answer arrived (${tokens})`);
    assert.equal(usage, false);
    const metrics = await (await fetch(`${stub.url}/metrics`)).text();
    assert.match(metrics, /llm_stub_requests_total\{endpoint="chat",outcome="cut"\} 1/);
    assert.match(metrics, /llm_stub_streams_open 0/);
  } finally {
    await stub.close();
  }
});

/** A sample's value in the stub's Prometheus text (0 when absent). */
async function stubMetric(url: string, sample: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

test('metrics: tokens are counted as they are written; a client that leaves mid-answer is client_gone, streamed or whole', async () => {
  const stub = await fastStub({}, SEED, fastProfile({ outputTokens: 200 }));
  await setStubState(stub.url, { slowFactor: 10 }); // ~10 ms a token: a 2 s stream
  try {
    const ac = new AbortController();
    const r = await fetch(`${stub.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages, stream: true }),
      signal: ac.signal,
    });
    const reader = r.body!.getReader();
    // 20 chunks with content (the role chunk's empty one among them) have arrived.
    for (let n = 0; n < 20;) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream ended early');
      n += (new TextDecoder().decode(value).match(/"content":"/g) ?? []).length;
    }
    const midway = await stubMetric(stub.url, 'llm_stub_output_tokens_total');
    assert.ok(midway >= 19 && midway < 200, `${midway} tokens counted while the stream runs`);
    ac.abort();
    const gone = 'llm_stub_requests_total{endpoint="chat",outcome="client_gone"}';
    for (let i = 0; i < 100 && (await stubMetric(stub.url, gone)) < 1; i++) await sleep(20);
    assert.equal(await stubMetric(stub.url, gone), 1);
    assert.equal(await stubMetric(stub.url, 'llm_stub_requests_total{endpoint="chat",outcome="ok"}'), 0);

    // A whole answer waited for (no stream) and given up on: counted too, once.
    await fetch(`${stub.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages }),
      signal: AbortSignal.timeout(100),
    }).catch(() => undefined);
    for (let i = 0; i < 100 && (await stubMetric(stub.url, gone)) < 2; i++) await sleep(20);
    assert.equal(await stubMetric(stub.url, gone), 2);
    assert.equal(await stubMetric(stub.url, 'llm_stub_requests_in_flight{endpoint="chat"}'), 0);
  } finally {
    await stub.close();
  }
});

test('embeddings: the SDK default (base64) and float give the same vectors; Ollama shapes', async () => {
  const stub = await fastStub();
  try {
    const oa = client(stub.url);
    const viaSdk = await oa.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
    assert.equal(viaSdk.data.length, 2);
    assert.deepEqual(viaSdk.data[0]?.embedding, Array.from(embedText('alpha', 64)));
    assert.equal(viaSdk.usage.prompt_tokens, 3); // ceil(5/4) + ceil(4/4)
    const float = await oa.embeddings.create({
      model: 'm',
      input: 'alpha',
      encoding_format: 'float',
      dimensions: 8,
    });
    assert.deepEqual(float.data[0]?.embedding, Array.from(embedText('alpha', 8)));

    const embed = (await (
      await fetch(`${stub.url}/api/embed`, {
        method: 'POST',
        body: JSON.stringify({ model: 'nomic', input: 'alpha' }),
      })
    ).json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(embed).sort(), [
      'embeddings',
      'load_duration',
      'model',
      'prompt_eval_count',
      'total_duration',
    ]);
    assert.deepEqual(embed['embeddings'], [Array.from(embedText('alpha', 64))]);
    const legacy = (await (
      await fetch(`${stub.url}/api/embeddings`, {
        method: 'POST',
        body: JSON.stringify({ model: 'nomic', prompt: 'alpha' }),
      })
    ).json()) as Record<string, unknown>;
    assert.deepEqual(legacy, { embedding: Array.from(embedText('alpha', 64)) });
    const noModel = await fetch(`${stub.url}/api/embed`, { method: 'POST', body: '{"input":"x"}' });
    assert.equal(noModel.status, 400);
    assert.deepEqual(await noModel.json(), { error: 'model is required' });
  } finally {
    await stub.close();
  }
});

/** Sends `n` requests, at most `concurrency` at a time; returns each arrival key's outcome. */
async function outcomes(
  url: string,
  n: number,
  concurrency: number,
  keyed: boolean,
): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  let next = 0;
  const one = async (i: number): Promise<void> => {
    const stream = i % 2 === 0;
    const ac = new AbortController();
    const hang = setTimeout(() => ac.abort(), 2500); // every other answer takes a few ms
    let key = keyed ? `k${i}` : `?${i}`;
    try {
      const r = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: keyed ? { [KEY_HEADER]: key } : {},
        body: JSON.stringify({ model: 'm', messages, stream }),
        signal: ac.signal,
      });
      key = r.headers.get(KEY_HEADER) ?? key;
      const body = await r.text();
      seen.set(
        key,
        r.status === 200 ? (stream && !body.endsWith('data: [DONE]\n\n') ? 'short' : 'ok') : String(r.status),
      );
    } catch (err) {
      seen.set(key, ac.signal.aborted ? 'hang' : `error:${(err as Error).name}`);
    } finally {
      clearTimeout(hang);
    }
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await one(next++);
    }),
  );
  return seen;
}

test('fault determinism: the same seed and request sequence give the same faults at concurrency 1 and 50', async () => {
  const rates = { rateLimit: 0.1, serverError: 0.1, contextLength: 0.05, cut: 0.1, hang: 0.03 };
  for (const keyed of [false, true]) {
    const runs: Map<string, string>[] = [];
    for (const concurrency of [1, 50]) {
      const stub = await fastStub(rates);
      try {
        runs.push(await outcomes(stub.url, 150, concurrency, keyed));
      } finally {
        await stub.close();
      }
    }
    const [serial, parallel] = runs as [Map<string, string>, Map<string, string>];
    assert.equal(serial.size, 150);
    if (keyed) assert.deepEqual([...parallel.entries()].sort(), [...serial.entries()].sort());
    // By arrival number: which request arrives k-th may change, the k-th fate does not (a hang
    // or a cut never shows the client its key, so these are compared as multisets).
    else assert.deepEqual([...parallel.values()].sort(), [...serial.values()].sort());
    const kinds = new Set(serial.values());
    for (const k of ['ok', '429', '500', '400', 'hang']) assert.ok(kinds.has(k), `${k} among ${[...kinds]}`);
    assert.ok(
      [...kinds].some((k) => k.startsWith('error:') || k === 'short'),
      'some answers were cut',
    );
  }
});

test('metabench llm-stub: prints its listening line; a bad profile or flag is refused without a stack trace', async () => {
  const run = startCli(['llm-stub', '--port', '0', '--seed', '3', '--error-rate', '15%']);
  try {
    const line = await new Promise<{ event: string; port: number }>((resolve, reject) => {
      let out = '';
      run.child.stdout!.on('data', (d: Buffer) => {
        out += d;
        const l = out.split('\n').find((x) => x.includes('"listening"'));
        if (l) resolve(JSON.parse(l) as { event: string; port: number });
      });
      run.child.once('exit', (code) => reject(new Error(`exited ${code}: ${run.stderrSoFar()}`)));
    });
    assert.equal(line.event, 'listening');
    const state = (await (await fetch(`http://127.0.0.1:${line.port}/_stub/state`)).json()) as {
      rates: { serverError: number };
    };
    assert.equal(state.rates.serverError, 0.15);
  } finally {
    run.child.kill('SIGTERM');
    await run.done;
  }
  const dir = tempDir('llm-stub');
  const bad = join(dir, 'profile.yaml');
  writeFileSync(bad, 'version: 1\nname: x\n');
  const r = await runCli(['llm-stub', '--profile', bad, '--port', '0']);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /profile\.yaml:\d+:\d+: ttft: is required/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  const flag = await runCli(['llm-stub', '--error-rate', '150%']);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--error-rate takes a fraction/);
  const sum = await runCli(['llm-stub', '--port', '0', '--error-rate', '0.7', '--timeout-rate', '0.6']);
  assert.equal(sum.code, 2);
  assert.match(sum.stderr, /add up to 1\.3/);
});
