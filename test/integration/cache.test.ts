import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { LocalLab } from '../../orchestrator/lab/local/LocalLab.js';
import { parsePrometheusText } from '../../orchestrator/scrape/prometheusText.js';
import { processState } from '../helpers/procState.js';
import { processTree } from '../../orchestrator/lab/proc/procUsage.js';
import { runCli } from '../helpers/cli.js';
import { zipfSampler } from '../../bench/workload/zipf.js';
import { seededRng } from '../../foundation/rng.js';

const KEYS = 1000;
const EXPONENT = 1;

function lab(prewarm: boolean, extra: Partial<ConstructorParameters<typeof LocalLab>[0]> = {}): LocalLab {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-cache-test-'));
  return new LocalLab({
    host: '127.0.0.1',
    apiPort: 0,
    workers: 8,
    work: { dist: 'constant', meanMs: 1 },
    seed: 7,
    logFile: join(dir, 'lab.log'),
    cache: { ttlS: 3600, prewarm, keys: KEYS, pool: 4, queryDelay: { dist: 'constant', meanMs: 2 } },
    ...extra,
  });
}

async function metrics(l: LocalLab) {
  return parsePrometheusText(await l.scrapeText('api', 5000));
}

/** Sends `keys` with at most `concurrency` requests in flight; returns the statuses. */
async function send(url: string, keys: number[], concurrency: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keys.length) {
        const k = keys[next++]!;
        const r = await request(`${url}/work?key=${k}`);
        await r.body.dump();
        statuses.push(r.statusCode);
      }
    }),
  );
  return statuses;
}

test('read-through on real redis-server and postgres: hits and misses match the key distribution', async () => {
  const l = lab(false);
  try {
    await l.up();
    const topo = l.topology();
    const names = topo.components.map((c) => c.name);
    assert.deepEqual(names, ['api', 'redis', 'postgres']);
    assert.match(topo.components[1]!.version ?? '', /^\d+\.\d+/, 'the Redis version is recorded');
    assert.match(topo.components[2]!.version ?? '', /^\d+/, 'the Postgres version is recorded');
    assert.equal(topo.links?.length, 2);

    const n = 3000;
    const draw = zipfSampler(KEYS, EXPONENT, seededRng(11, 'keys'));
    const keys = Array.from({ length: n }, draw);
    // Expected misses from a cold cache with no expiry: one per distinct key, E = Σ 1 − (1 − p_k)^n.
    let hN = 0;
    for (let k = 1; k <= KEYS; k++) hN += 1 / k ** EXPONENT;
    let expectedMisses = 0;
    for (let k = 1; k <= KEYS; k++) expectedMisses += 1 - (1 - 1 / k ** EXPONENT / hN) ** n;
    const statuses = await send(l.apiUrl, keys, 4);
    assert.ok(
      statuses.every((s) => s === 200),
      `statuses: ${[...new Set(statuses)]}`,
    );
    const m = await metrics(l);
    const hits = m.get('api_cache_hits_total')!;
    const misses = m.get('api_cache_misses_total')!;
    assert.equal(hits + misses, n, 'every request looked the cache up once');
    const expectedHitRatio = 1 - expectedMisses / n;
    const hitRatio = hits / n;
    // Four in flight at once can miss the same key twice before its fill lands: a little slack.
    assert.ok(
      Math.abs(hitRatio - expectedHitRatio) < 0.03,
      `hit ratio ${hitRatio.toFixed(3)}, expected ${expectedHitRatio.toFixed(3)}`,
    );
    assert.equal(m.get('api_db_queries_total{result="ok"}'), misses, 'each miss queried the database once');
    assert.equal(m.get('api_cache_fill_errors_total') ?? 0, 0);
    assert.equal(m.get('api_db_pool_waiting'), 0, 'nothing waits for a connection once idle');

    // flush-cache empties Redis: the same keys miss again.
    await l.flushCache();
    await send(l.apiUrl, [1, 1, 2], 1);
    const m2 = await metrics(l);
    assert.equal(m2.get('api_cache_misses_total')! - misses, 2);
  } finally {
    await l.down();
  }
});

test('a pre-warmed cache serves every key from Redis; pausing postgres then does not matter, pausing redis does', async () => {
  const l = lab(true, { requestTimeoutMs: 300 });
  try {
    await l.up();
    const keys = Array.from({ length: 200 }, (_, i) => (i * 7) % KEYS);
    await send(l.apiUrl, keys, 4);
    let m = await metrics(l);
    assert.equal(m.get('api_cache_hits_total'), 200);
    assert.equal(m.get('api_cache_misses_total') ?? 0, 0);

    // Pausing postgres freezes the postmaster and its backends; hits are still served.
    const pgPid = l.processes().find((p) => p.component === 'postgres')!.pid;
    await l.pause('postgres');
    // SIGSTOP is delivered asynchronously: give the kernel a moment.
    const allStopped = () => processTree(pgPid).every((pid) => ['T', 't', null].includes(processState(pid)));
    for (let i = 0; i < 50 && !allStopped(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(
      allStopped(),
      `every postgres process is stopped: ${processTree(pgPid).map((p) => `${p}:${processState(p)}`)}`,
    );
    assert.deepEqual(await send(l.apiUrl, [3, 4, 5], 1), [200, 200, 200]);
    await l.flushCache();
    // A miss now waits on a frozen database and is abandoned by the 300 ms request timeout.
    assert.deepEqual(await send(l.apiUrl, [6], 1), [504]);
    await l.resume('postgres');
    assert.deepEqual(await send(l.apiUrl, [6, 6], 1), [200, 200]);

    await l.pause('redis');
    assert.deepEqual(await send(l.apiUrl, [7], 1), [504], 'a frozen cache times the request out');
    await l.resume('redis');
    m = await metrics(l);
    assert.ok(m.get('api_timed_out_total')! >= 2);
  } finally {
    await l.down();
  }
});

test('metabench run without redis-server on the PATH stops before starting, exit code 4, naming the package', async () => {
  // A PATH that holds node and nothing else (node's own directory may hold redis-server too).
  const bin = mkdtempSync(join(tmpdir(), 'metabench-nobin-'));
  symlinkSync(process.execPath, join(bin, 'node'));
  const r = await runCli(
    ['run', 'experiments/cache-stampede.yaml', '--scale', '0.2', '--any-scale', '--out', join(bin, 'out')],
    { PATH: bin },
  );
  assert.equal(r.code, 4, r.stderr);
  assert.match(r.stderr, /apt-get install redis-server/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
