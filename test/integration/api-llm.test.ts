import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApi, type ApiService } from '../../services/api/server.js';
import type { UpstreamRetry } from '../../services/api/llmUpstream.js';
import { fastProfile, fastStub, setStubState } from '../helpers/llmStub.js';
import { LocalLab } from '../../orchestrator/lab/local/LocalLab.js';
import { NO_FAULTS } from '../../services/llm-stub/faults.js';
import { DEFAULT_PROFILE } from '../../services/llm-stub/profile.js';

async function apiFor(stubPort: number, retry: UpstreamRetry): Promise<ApiService & { url: string }> {
  const api = await startApi({
    host: '127.0.0.1',
    port: 0,
    workers: 2,
    work: { dist: 'constant', meanMs: 1 },
    seed: 5,
    llm: {
      address: { host: '127.0.0.1', port: stubPort },
      slots: 16,
      timeoutMs: 2000,
      retry,
      model: 'gpt-4o-mini',
      embeddingModel: 'text-embedding-3-small',
    },
  });
  return Object.assign(api, { url: `http://127.0.0.1:${api.port}` });
}

/** A metric's value in Prometheus text (0 when absent). */
async function metric(url: string, sample: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

const NO_RETRY = { maxAttempts: 1, baseMs: 0, capMs: 0 };

test('/chat streams the provider answer through to the client, [DONE] included', async () => {
  const stub = await fastStub();
  const api = await apiFor(stub.port, NO_RETRY);
  try {
    const r = await fetch(`${api.url}/chat?prompt=50`, { method: 'POST' });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    const text = await r.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    assert.match(text, /"usage":\{"prompt_tokens":\d+,"completion_tokens":12/);
    assert.equal(await metric(api.url, 'api_llm_upstream_calls_total{route="chat",result="ok"}'), 1);

    const agent = await fetch(`${api.url}/agent?steps=3`, { method: 'POST' });
    assert.deepEqual(await agent.json(), { steps: 3, tokens: 36 });
    const retrieve = await fetch(`${api.url}/retrieve?key=7`);
    assert.deepEqual(await retrieve.json(), { key: 7, db: false });
    const ingest = await fetch(`${api.url}/ingest`, { method: 'POST', body: 'a document' });
    assert.equal(ingest.status, 202);
    for (let i = 0; i < 100; i++) {
      if ((await metric(api.url, 'api_llm_upstream_calls_total{route="ingest",result="ok"}')) === 1) break;
      await sleep(20);
    }
    assert.equal(await metric(api.url, 'api_llm_upstream_calls_total{route="ingest",result="ok"}'), 1);
  } finally {
    await api.close();
    await stub.close();
  }
});

test("the api's own retry policy: failures are retried up to maxAttempts, a 400 never", async () => {
  const stub = await fastStub({ serverError: 1 });
  const api = await apiFor(stub.port, { maxAttempts: 3, baseMs: 5, capMs: 20 });
  try {
    const r = await fetch(`${api.url}/chat`, { method: 'POST' });
    assert.equal(r.status, 502);
    assert.deepEqual(await r.json(), { error: 'provider: status', status: 500 });
    assert.equal(await metric(api.url, 'api_llm_upstream_attempts_total{route="chat"}'), 3);
    assert.equal(await metric(api.url, 'api_llm_upstream_retries_total{route="chat"}'), 2);

    await setStubState(stub.url, { rates: { serverError: 0, contextLength: 1 } });
    const bad = await fetch(`${api.url}/chat`, { method: 'POST' });
    assert.equal(bad.status, 502);
    assert.equal(
      await metric(api.url, 'api_llm_upstream_attempts_total{route="chat"}'),
      4,
      'a 400 is not retried',
    );

    // Half the calls fail: with 3 attempts most requests still succeed, at more attempts than calls.
    await setStubState(stub.url, { rates: { contextLength: 0, serverError: 0.5 } });
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async () => (await fetch(`${api.url}/retrieve?key=1`)).status),
    );
    assert.ok(statuses.filter((s) => s === 200).length >= 20, `${statuses}`);
    assert.ok((await metric(api.url, 'api_llm_upstream_attempts_total{route="retrieve"}')) > 30);
  } finally {
    await api.close();
    await stub.close();
  }
});

test('a client that goes away mid-stream: the upstream call is cancelled and both are counted', async () => {
  const stub = await fastStub({}, 11, fastProfile({ outputTokens: 400 }));
  await setStubState(stub.url, { slowFactor: 10 }); // ~10 ms a token: seconds of stream
  const api = await apiFor(stub.port, NO_RETRY);
  try {
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${api.url}/chat`, { method: 'POST' }, (res) => {
        res.once('data', () => {
          req.destroy(); // gone after the first chunk
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end();
    });
    for (let i = 0; i < 100; i++) {
      if ((await metric(stub.url, 'llm_stub_requests_total{endpoint="chat",outcome="client_gone"}')) === 1)
        break;
      await sleep(20);
    }
    assert.equal(await metric(stub.url, 'llm_stub_requests_total{endpoint="chat",outcome="client_gone"}'), 1);
    assert.equal(await metric(api.url, 'api_client_abandoned_total{route="chat"}'), 1);
    assert.equal(await metric(api.url, 'api_llm_upstream_aborted_total{route="chat"}'), 1);
    assert.equal(await metric(api.url, 'api_llm_streams_open'), 0);
  } finally {
    await api.close();
    await stub.close();
  }
});

test('a stream the provider cuts is cut for the client too (an error, not a clean end)', async () => {
  const stub = await fastStub({ cut: 1 }, 11, fastProfile({ outputTokens: 40 }));
  const api = await apiFor(stub.port, { maxAttempts: 3, baseMs: 1, capMs: 5 });
  try {
    const r = await fetch(`${api.url}/chat`, { method: 'POST' });
    assert.equal(r.status, 200);
    await assert.rejects(r.text());
    assert.equal(await metric(api.url, 'api_llm_upstream_calls_total{route="chat",result="cut"}'), 1);
    // A stream already passed on is not retried.
    assert.equal(await metric(api.url, 'api_llm_upstream_attempts_total{route="chat"}'), 1);
  } finally {
    await api.close();
    await stub.close();
  }
});

test('in the local lab the llm stub is a component: killed, the chat route fails; started again on its port, behind the same link, it serves', async () => {
  const lab = new LocalLab({
    host: '127.0.0.1',
    apiPort: 0,
    workers: 2,
    work: { dist: 'constant', meanMs: 1 },
    seed: 3,
    llm: {
      profileFile: DEFAULT_PROFILE,
      profileName: 'default',
      rates: NO_FAULTS,
      slots: 4,
      timeoutMs: 2000,
      retry: NO_RETRY,
    },
  });
  try {
    await lab.up();
    const chat = async (): Promise<number> => {
      const r = await fetch(`${lab.apiUrl}/chat?prompt=10`, { method: 'POST' });
      await r.text().catch(() => '');
      return r.status;
    };
    assert.equal(await chat(), 200);
    const before = lab.processes().find((p) => p.component === 'llm')!.pid;
    await lab.kill('llm');
    assert.notEqual(await chat(), 200, 'no provider, no chat');
    await lab.start('llm');
    const after = lab.processes().find((p) => p.component === 'llm')!.pid;
    assert.notEqual(after, before, 'a new stub process');
    assert.equal(await chat(), 200, 'the restarted stub serves through the same link');
  } finally {
    await lab.down();
  }
});
