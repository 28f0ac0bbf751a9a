import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startCli, tempDir } from '../helpers/cli.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { readSeries, sum, type Row } from '../helpers/experiment.js';

// Every trigger kind's observable effect on a running local lab (api, Redis and Postgres
// behind the fault proxy). Each run lays several triggers in sequence with a quiet second
// or two between them, and the per-second series shows each one's effect in its window.
// Meanwhile the test polls the fault proxy's API: each toxic is seen on its link, and at
// no moment are two triggers' faults on the links at once (each was undone in time).

const LAB = `
lab:
  api: { workers: 8, work: { dist: constant, mean: 2ms }, requestTimeout: 400ms }
  cache: { ttl: TTL, prewarm: true }
  db: { keys: 100, pool: 4, query: { dist: constant, mean: 5ms } }
load:
  arrival: constant
  rate: 100/s
  mix: [{ name: read, share: 100%, key: { dist: uniform, keys: 100 } }]
client: { timeout: 600ms, retry: { policy: none } }
recovery: { within: 1x, tolerance: 20%, window: 1s, hold: 1s }
`;

interface ProxyView {
  name: string;
  enabled: boolean;
  toxics: { name: string; type: string }[];
}

/**
 * Runs an experiment, polling the fault proxy's API (found in run-1/manifest.json)
 * every 100 ms while it runs; returns the summary, the series and what was seen.
 */
async function runWatched(
  name: string,
  body: string,
): Promise<{ out: string; s: RunSummary; rs: Row[]; seen: Set<string>[] }> {
  const dir = tempDir(`trig-${name}`);
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `name: ${name}\n${body}`);
  const out = join(dir, 'out');
  const state = tempDir('trig-state');
  const run = startCli(['run', '--any-scale', file, '--out', out, '--quiet'], { METABENCH_STATE_DIR: state });
  let finished = false;
  void run.done.then(() => (finished = true));
  const seen: Set<string>[] = [];
  let api: string | undefined;
  while (!finished) {
    await new Promise((r) => setTimeout(r, 100));
    const manifest = join(out, 'run-1/manifest.json');
    if (!api && existsSync(manifest)) {
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as {
        topology: { links?: { proxy?: { api: string } }[] };
      };
      api = m.topology.links?.[0]?.proxy?.api;
    }
    if (!api) continue;
    try {
      const res = await request(`${api}/proxies`, { headersTimeout: 1000, bodyTimeout: 1000 });
      const proxies = (await res.body.json()) as Record<string, ProxyView>;
      const faults = new Set<string>();
      for (const p of Object.values(proxies)) {
        if (!p.enabled) faults.add(`${p.name}:disabled`);
        for (const t of p.toxics) faults.add(`${p.name}:${t.type}`);
      }
      seen.push(faults);
    } catch {
      /* the lab is starting or has stopped */
    }
  }
  const r = await run.done;
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  return { out, s, rs: readSeries(out), seen };
}

/** The trigger's window in whole seconds of the series: from its start to its end. */
function windowOf(s: RunSummary, kind: string): [number, number] {
  const t = s.triggers.find((x) => x.kind === kind);
  assert.ok(t, `trigger ${kind} in summary.json: ${JSON.stringify(s.triggers)}`);
  assert.ok(t.endS > t.startS, `${kind} ends after it starts`);
  return [Math.ceil(t.startS), Math.floor(t.endS)];
}

test('process triggers, link faults, a load spike and a cache flush each show their effect in their window', async () => {
  const { s, rs, seen } = await runWatched(
    'triggers-a',
    LAB.replace('TTL', '1h') +
      `schedule:
  warmup: 1s
  baseline: 3s
  triggers:
    - { kind: pause, target: api, duration: 2s }
    - { kind: latency, link: redis, latency: 100ms, duration: 2s, at: 4s }
    - { kind: partition, link: redis, duration: 2s, at: 8s }
    - { kind: kill, target: api, duration: 2s, at: 12s }
    - { kind: load-spike, factor: 3x, duration: 2s, at: 16s }
    - { kind: flush-cache, duration: 1s, at: 20s }
    - { kind: stop, target: redis, duration: 2s, at: 22s }
  observe: 4s
`,
  );
  assert.equal(s.offered, s.recorded);
  assert.deepEqual(
    s.triggers.map((t) => t.kind),
    ['pause', 'latency', 'partition', 'kill', 'load-spike', 'flush-cache', 'stop'],
  );
  assert.ok(
    s.triggers.every((t) => t.error === undefined),
    JSON.stringify(s.triggers),
  );
  const baseGoodput = sum(rs, 'goodput', 1, 4) / 3;
  assert.ok(baseGoodput > 90, `baseline goodput ${baseGoodput}/s`);

  // pause: nothing is served while the api is frozen.
  const [p0, p1] = windowOf(s, 'pause');
  assert.ok(sum(rs, 'goodput', p0, p1) < 0.1 * baseGoodput * (p1 - p0), 'no goodput while the api is paused');
  // latency on the redis link: every request waits on Redis, so the median response grows by about the latency.
  const [l0, l1] = windowOf(s, 'latency');
  const p50 = rs
    .filter((r) => (r.t_s as number) >= l0 && (r.t_s as number) < l1)
    .map((r) => Number(r.response_p50_ms ?? 0));
  assert.ok(Math.max(...p50) >= 100, `response p50 under 100 ms of latency on the redis link: ${p50}`);
  // partition of the redis link: the api cannot reach its cache; requests fail (its request timeout: 504).
  const [n0, n1] = windowOf(s, 'partition');
  assert.ok(
    sum(rs, 'failed_http_5xx', n0, n1) > 0.5 * baseGoodput * (n1 - n0),
    'a partitioned cache fails requests',
  );
  // kill: connections are refused until the api is started again; then it serves again.
  const [k0, k1] = windowOf(s, 'kill');
  assert.ok(
    sum(rs, 'failed_conn_refused', k0, k1) > 0.5 * baseGoodput * (k1 - k0),
    'a killed api refuses connections',
  );
  // The kill ends when the restart is issued; its time to healthy is reported on its own.
  const kill = s.triggers.find((t) => t.kind === 'kill')!;
  assert.ok(kill.restartHealthyS !== undefined && kill.restartHealthyS > 0, JSON.stringify(kill));
  const healthy = Math.ceil(kill.endS + kill.restartHealthyS);
  assert.ok(sum(rs, 'goodput', healthy + 1, healthy + 2) > 0.8 * baseGoodput, 'the restarted api serves');
  // load spike: three times the offered rate over its window, exactly (constant arrivals).
  const [s0, s1] = windowOf(s, 'load-spike');
  assert.equal(sum(rs, 'offered', s0, s1), 300 * (s1 - s0));
  // flush-cache: the next second is all misses, refilled from Postgres.
  const f0 = Math.floor(s.triggers.find((t) => t.kind === 'flush-cache')!.startS);
  assert.ok(sum(rs, 'cache_misses', f0, f0 + 2) >= 50, 'misses after the flush');
  assert.equal(sum(rs, 'cache_misses', 1, 4), 0, 'no miss in the warm baseline');
  // stop redis: a clean stop; requests fail until it is back (empty), then misses refill it.
  const [r0, r1] = windowOf(s, 'stop');
  assert.ok(
    sum(rs, 'goodput', r0, r1) < 0.5 * baseGoodput * (r1 - r0),
    'requests fail while Redis is stopped',
  );
  assert.equal(s.recovered, true, s.recoveryReason);

  // The link faults were on the proxy, one at a time, and gone afterwards.
  const all = new Set(seen.flatMap((x) => [...x]));
  assert.ok(all.has('redis:latency'), [...all].join(' '));
  assert.ok(all.has('redis:disabled'), [...all].join(' '));
  assert.ok(
    seen.every((x) => x.size <= 1),
    'never two faults on the links at once',
  );
  assert.equal(seen.at(-1)?.size ?? 0, 0, 'no fault left on the links at the end');
});

test('faults on the database link and resets on the cache link, and a killed Postgres restarting, each show their effect', async () => {
  // A 1 s TTL keeps a steady stream of misses, so the database link carries traffic.
  const { s, rs, seen } = await runWatched(
    'triggers-b',
    LAB.replace('TTL', '1s') +
      `schedule:
  warmup: 2s
  baseline: 3s
  triggers:
    - { kind: timeout, link: postgres, duration: 2s }
    - { kind: bandwidth, link: postgres, rate: 1, duration: 2s, at: 4s }
    - { kind: reset-peer, link: redis, duration: 2s, at: 8s }
    - { kind: slow-close, link: redis, delay: 500ms, duration: 2s, at: 12s }
    - { kind: kill, target: postgres, duration: 2s, at: 16s }
  observe: 5s
`,
  );
  assert.equal(s.offered, s.recorded);
  assert.ok(
    s.triggers.every((t) => t.error === undefined),
    JSON.stringify(s.triggers),
  );
  const misses = sum(rs, 'cache_misses', 2, 5) / 3;
  assert.ok(misses > 20, `a 1 s TTL gives a stream of misses in the baseline: ${misses}/s`);
  const failed = (a: number, b: number): number =>
    sum(rs, 'failed_http_5xx', a, b) + sum(rs, 'failed_timeout', a, b) + sum(rs, 'failed_conn_reset', a, b);
  const baseFailed = failed(2, 5);
  // timeout (a black hole) on the postgres link: misses never get an answer.
  const [t0, t1] = windowOf(s, 'timeout');
  assert.ok(failed(t0, t1) > baseFailed + 10, `black-holed database: ${failed(t0, t1)} failures`);
  // bandwidth of 1 KB/s on the postgres link: misses crawl past the request timeout.
  const [b0, b1] = windowOf(s, 'bandwidth');
  assert.ok(failed(b0, b1) > baseFailed + 10, `throttled database link: ${failed(b0, b1)} failures`);
  // reset-peer on the redis link: the cache connection is reset, lookups fail.
  const [r0, r1] = windowOf(s, 'reset-peer');
  assert.ok(failed(r0, r1) > baseFailed + 10, `reset cache connections: ${failed(r0, r1)} failures`);
  // kill postgres: misses fail until it restarts (crash recovery on the same data), then are served.
  const [k0, k1] = windowOf(s, 'kill');
  assert.ok(failed(k0, k1) > baseFailed + 10, `killed database: ${failed(k0, k1)} failures`);
  const end = Math.ceil(s.triggers.find((t) => t.kind === 'kill')!.endS);
  const last = rs.at(-1)!.t_s as number;
  assert.ok(sum(rs, 'db_queries', end + 1, last) > 0, 'the restarted database answers queries');

  const all = new Set(seen.flatMap((x) => [...x]));
  for (const f of ['postgres:timeout', 'postgres:bandwidth', 'redis:reset_peer', 'redis:slow_close'])
    assert.ok(all.has(f), `${f} seen on the proxy: ${[...all].join(' ')}`);
  assert.ok(
    seen.every((x) => x.size <= 1),
    'never two faults on the links at once',
  );
  assert.equal(seen.at(-1)?.size ?? 0, 0, 'no fault left on the links at the end');
});
