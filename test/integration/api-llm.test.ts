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
import { join } from 'node:path';
import { tempDir } from '../helpers/cli.js';
import { readSeries } from '../helpers/experiment.js';
import { runOnce } from '../../orchestrator/run/runOnce.js';
import { StatusLine } from '../../orchestrator/run/status.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { planRun } from '../../orchestrator/spec/plan.js';
import { Journal } from '../../orchestrator/trigger/journal.js';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { PROVIDER_COLUMNS } from '../../orchestrator/scrape/scraper.js';

registerRuntimes();

async function apiFor(
  stubPort: number,
  retry: UpstreamRetry,
  o: { slots?: number; requestTimeoutMs?: number; deadlineDrop?: boolean } = {},
): Promise<ApiService & { url: string }> {
  const api = await startApi({
    host: '127.0.0.1',
    port: 0,
    workers: 2,
    work: { dist: 'constant', meanMs: 1 },
    seed: 5,
    ...(o.requestTimeoutMs !== undefined ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
    ...(o.deadlineDrop ? { mitigations: { deadlineDrop: true } } : {}),
    llm: {
      address: { host: '127.0.0.1', port: stubPort },
      slots: o.slots ?? 16,
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
    // Its own metrics, on its own port (not through the link): what a run scrapes each second.
    assert.match(
      await lab.scrapeText('llm', 2000),
      /llm_stub_requests_total\{endpoint="chat",outcome="ok"\} 1\n/,
    );
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

/** Polls a metric until it reaches `value` (or 2 s pass), then returns what it reads. */
async function metricReaches(url: string, sample: string, value: number): Promise<number> {
  for (let i = 0; i < 100 && (await metric(url, sample)) < value; i++) await sleep(20);
  return metric(url, sample);
}

/** POSTs (or GETs) `path` with headers; the status, x-shed, and ms until the answer's headers. */
async function timed(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; shed: string | null; ms: number; body: Response }> {
  const t0 = performance.now();
  const r = await fetch(`${url}${path}`, { method: path.startsWith('/retrieve') ? 'GET' : 'POST', headers });
  return { status: r.status, shed: r.headers.get('x-shed'), ms: performance.now() - t0, body: r };
}

const GONE = (endpoint: string): string =>
  `llm_stub_requests_total{endpoint="${endpoint}",outcome="client_gone"}`;

test("x-deadline-ms on the LLM routes (deadline dropping): the provider call is cancelled at the client's deadline and answered 503 deadline, as /work answers", async () => {
  const stub = await fastStub();
  // TTFT ≥ 600 ms (the profile's 2 ms floor × 300): the answer cannot come within 200 ms.
  await setStubState(stub.url, { slowFactor: 300 });
  const api = await apiFor(stub.port, NO_RETRY, { deadlineDrop: true });
  try {
    const chat = await timed(api.url, '/chat', { 'x-deadline-ms': '200' });
    assert.equal(chat.status, 503);
    assert.equal(chat.shed, 'deadline', 'x-shed: deadline, which the client records as shed');
    await chat.body.text();
    assert.ok(chat.ms >= 195 && chat.ms < 450, `answered ${chat.ms.toFixed(0)} ms after sending`);
    assert.equal(await metricReaches(stub.url, GONE('chat'), 1), 1, 'the stub saw its client leave');
    assert.equal(await metric(api.url, 'api_llm_upstream_calls_total{route="chat",result="deadline"}'), 1);
    assert.equal(await metric(api.url, 'api_llm_upstream_aborted_total{route="chat"}'), 1);
    assert.equal(
      await metric(api.url, 'api_client_abandoned_total{route="chat"}'),
      0,
      'the api cut it, not its client',
    );
    assert.equal(await metric(api.url, 'api_requests_completed_total{status="503"}'), 1);

    // A whole answer (an agent step) likewise: the stub counts the call it never finished.
    const agent = await timed(api.url, '/agent?steps=2', { 'x-deadline-ms': '150' });
    assert.equal(agent.status, 503);
    assert.equal(agent.shed, 'deadline');
    await agent.body.text();
    assert.ok(agent.ms >= 145 && agent.ms < 400, `answered ${agent.ms.toFixed(0)} ms after sending`);
    assert.equal(await metricReaches(stub.url, GONE('chat'), 2), 2);
    assert.equal(await metric(api.url, 'api_llm_upstream_calls_total{route="agent",result="deadline"}'), 1);
    // And an embedding (slowed ×300 too: ≥ 300 ms).
    const retrieve = await timed(api.url, '/retrieve?key=3', { 'x-deadline-ms': '100' });
    assert.equal(retrieve.status, 503);
    assert.equal(retrieve.shed, 'deadline');
    await retrieve.body.text();
    assert.equal(await metricReaches(stub.url, GONE('embeddings'), 1), 1);

    // Without deadline dropping the header is not the api's business (as on /work): served.
    await setStubState(stub.url, { slowFactor: 20 });
    const plain = await apiFor(stub.port, NO_RETRY);
    try {
      const r = await timed(plain.url, '/chat', { 'x-deadline-ms': '10' });
      assert.equal(r.status, 200);
      assert.ok((await r.body.text()).endsWith('data: [DONE]\n\n'));
    } finally {
      await plain.close();
    }
  } finally {
    await api.close();
    await stub.close();
  }
});

test("the api's request timeout on /chat: 504 at the timeout, the provider's stream cancelled, counted timed out; a stream already passed on is cut", async () => {
  const stub = await fastStub({}, 11, fastProfile({ outputTokens: 400 }));
  await setStubState(stub.url, { slowFactor: 300 });
  const api = await apiFor(stub.port, NO_RETRY, { requestTimeoutMs: 250 });
  try {
    const r = await timed(api.url, '/chat');
    assert.equal(r.status, 504);
    assert.deepEqual(await r.body.json(), { error: 'server timeout' });
    assert.ok(r.ms >= 245 && r.ms < 500, `answered ${r.ms.toFixed(0)} ms after sending`);
    assert.equal(await metricReaches(stub.url, GONE('chat'), 1), 1, 'the stub saw its client leave');
    assert.equal(await metric(api.url, 'api_timed_out_total'), 1);
    assert.equal(await metric(api.url, 'api_requests_completed_total{status="504"}'), 1);
    assert.equal(
      await metric(api.url, 'api_llm_upstream_calls_total{route="chat",result="request_timeout"}'),
      1,
    );

    // TTFT ~30 ms, then a token every ~10 ms for 4 s: the 200 is out when the timeout passes.
    await setStubState(stub.url, { slowFactor: 10 });
    const streamed = await timed(api.url, '/chat');
    assert.equal(streamed.status, 200);
    await assert.rejects(streamed.body.text(), 'the stream is cut, not ended cleanly');
    assert.equal(await metricReaches(stub.url, GONE('chat'), 2), 2);
    assert.equal(await metric(api.url, 'api_timed_out_total'), 2);
    assert.equal(await metric(api.url, 'api_llm_streams_open'), 0);
  } finally {
    await api.close();
    await stub.close();
  }
});

test('a request waiting for a provider slot past its deadline is dropped unstarted when the slot frees', async () => {
  const stub = await fastStub({}, 11, fastProfile({ outputTokens: 40 }));
  await setStubState(stub.url, { slowFactor: 25 }); // ~1 s a chat
  const api = await apiFor(stub.port, NO_RETRY, { slots: 1, deadlineDrop: true });
  try {
    const first = timed(api.url, '/chat');
    await sleep(50);
    const queued = await timed(api.url, '/chat', { 'x-deadline-ms': '200' });
    assert.equal(queued.status, 503);
    assert.equal(queued.shed, 'deadline');
    await queued.body.text();
    const f = await first;
    assert.equal(f.status, 200);
    assert.ok((await f.body.text()).endsWith('data: [DONE]\n\n'));
    assert.equal(await metric(api.url, 'api_rejected_total{reason="deadline"}'), 1);
    // The provider saw one chat: the dropped one never reached it.
    assert.equal(await metric(stub.url, 'llm_stub_requests_total{endpoint="chat",outcome="ok"}'), 1);
    assert.equal(await metric(stub.url, GONE('chat')), 0);
    assert.equal(await metric(api.url, 'api_llm_upstream_calls_total{route="chat",result="ok"}'), 1);
  } finally {
    await api.close();
    await stub.close();
  }
});

// A short run of an LLM lab on the local runtime: the stub's own series are in timeseries.csv.
const LLM_RUN = `name: llm-provider-series
lab:
  api: { workers: 2, work: { dist: constant, mean: 1ms } }
  llm: { profile: default, errorRate: 20%, slots: 32, timeout: 5s, retry: { maxAttempts: 1 } }
load:
  arrival: poisson
  rate: 5/s
  mix:
    - { name: chat, share: 100%, method: POST, path: /chat?prompt=20 }
client: { timeout: 8s }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: latency, link: llm, latency: 5ms, duration: 1s }, observe: 2s }
recovery: { within: 3x, tolerance: 50%, window: 1s, hold: 0s }
seed: 5
`;

test("an LLM lab's run records the provider's requests, errors and tokens per second in timeseries.csv", async () => {
  const dir = tempDir('llm-time-series');
  const plan = planRun(parseExperiment(LLM_RUN, 'llm-provider-series.yaml'), { scale: 1, run: 1 });
  const quiet = { isTTY: false, write: () => true };
  await runOnce(plan, join(dir, 'run-1'), {
    journal: new Journal(join(dir, 'journal')),
    status: new StatusLine(quiet as unknown as NodeJS.WriteStream),
    stop: new AbortController().signal,
    runtime: 'local',
  });
  const rows = readSeries(dir);
  for (const col of PROVIDER_COLUMNS) assert.ok(col in rows[0]!, `timeseries.csv has ${col}`);
  const col = (name: string): number[] => rows.map((r) => Number(r[name] ?? 0));
  const total = (name: string): number => col(name).reduce((a, b) => a + b, 0);
  assert.ok(total('llm_provider_requests') > 5, `${total('llm_provider_requests')} provider requests`);
  assert.ok(total('llm_provider_errors_server_error') > 0, 'a fifth of the answers fail');
  // Tokens are counted as they are written: several seconds carry some, not only the streams' ends.
  assert.ok(total('llm_provider_tokens') > 100, `${total('llm_provider_tokens')} tokens`);
  assert.ok(col('llm_provider_tokens').filter((v) => v > 0).length >= 3, `${col('llm_provider_tokens')}`);
});
