import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { assertClaimed, experimentPath } from '../helpers/catalogue.js';
import { runRealServerRow } from '../helpers/realServer.js';
import { assertTwinAgrees } from '../helpers/twin.js';

// The catalogue's rows on real servers (issue 34, point 4), on the local runtime, each at its
// smallest accepted scale. php-fpm-retry-storm is the CI share's row (real-server-ci.test.ts);
// this file has the others.

/** The run's timeseries.csv rows. */
function series(out: string): Record<string, string>[] {
  return parse(readFileSync(join(out, 'run-1', 'timeseries.csv')), { columns: true }) as Record<
    string,
    string
  >[];
}

test('php-fpm-no-retry recovers: amplification 1', async () => {
  const { s } = await runRealServerRow('php-fpm-no-retry');
  assertClaimed('php-fpm-no-retry', s);
  assert.ok(s.afterTrigger.amplification! <= 1.01, `amplification ${s.afterTrigger.amplification}`);
  await assertTwinAgrees(experimentPath('php-fpm-no-retry'), s);
});

test("gunicorn-retry-storm is metastable on gunicorn behind nginx: amplification >= 2, goodput < 10% of the baseline, nginx receiving the storm while gunicorn's accept queue is held at its bound", async () => {
  const { s, out } = await runRealServerRow('gunicorn-retry-storm');
  assertClaimed('gunicorn-retry-storm', s);
  assert.ok(
    s.afterTrigger.goodputPerS! < 0.1 * s.baseline.goodputPerS!,
    `goodput ${s.afterTrigger.goodputPerS} vs baseline ${s.baseline.goodputPerS}`,
  );
  assert.ok(s.afterTrigger.amplification! >= 2, `client amplification ${s.afterTrigger.amplification}`);
  // nginx counted the retries (its stub_status requests): the server saw the storm, where
  // gunicorn alone could not (the kernel drops the connections past its full accept queue).
  assert.ok(
    s.afterTrigger.amplificationServer! > 1.5,
    `server amplification ${s.afterTrigger.amplificationServer}`,
  );
  assert.match(s.sustainingEffect ?? '', /the api receives .* against a capacity of 160\/s/);
  // gunicorn's accept queue over the last third of the observation: at its bound (the listen
  // backlog, 4096, capped by net.core.somaxconn), full of nginx's connections.
  const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
  const bound = Math.min(4096, somaxconn);
  const observe = series(out).filter((r) => r['phase'] === 'observe');
  const tail = observe.slice(Math.floor((observe.length * 2) / 3));
  const queue = tail
    .map((r) => Number(r['server_queue_depth']))
    .filter((q) => Number.isFinite(q))
    .sort((a, b) => a - b);
  const median = queue[Math.floor(queue.length / 2)]!;
  assert.ok(median >= 0.95 * bound, `accept queue median ${median} in the tail (bound ${bound})`);
  // The simulation models gunicorn behind nginx as the api's fixed FIFO pool, as PHP-FPM: the same class.
  await assertTwinAgrees(experimentPath('gunicorn-retry-storm'), s);
});

test('gunicorn-no-retry recovers: amplification 1', async () => {
  const { s } = await runRealServerRow('gunicorn-no-retry');
  assertClaimed('gunicorn-no-retry', s);
  assert.ok(s.afterTrigger.amplification! <= 1.01, `amplification ${s.afterTrigger.amplification}`);
  await assertTwinAgrees(experimentPath('gunicorn-no-retry'), s);
});

// The OSDI '22 garbage-collection mechanism on the JVM reference server (its header has the
// computation): a load spike leaves the 48 MiB heap full and the collector running without
// pause; with 512 MiB the same spike drains.

test('jvm-gc-spike is metastable, sustained by GC time per second alone, the server alive (no OutOfMemoryError in its request reader)', async () => {
  const { s, out } = await runRealServerRow('jvm-gc-spike');
  assertClaimed('jvm-gc-spike', s);
  // GC is the sustaining effect, and the only one: the server receives under its capacity.
  assert.match(
    s.sustainingEffect ?? '',
    /^GC time per second \d+ ms \(garbage collection takes [\d.]+% of the time\)$/,
  );
  assert.equal(s.mechanisms?.find((m) => m.name === 'load-above-capacity')?.met, false);
  assert.ok(
    s.afterTrigger.goodputPerS! < 0.1 * s.baseline.goodputPerS!,
    `goodput ${s.afterTrigger.goodputPerS} vs baseline ${s.baseline.goodputPerS}`,
  );
  // A slowdown, not a crash: the JDK HttpServer's one reader of requests never died of an
  // exhausted heap (a crash is what the first attempt got: docs/reproductions.md).
  const log = readFileSync(join(out, 'run-1', 'lab.log'), 'utf8');
  assert.doesNotMatch(log, /Exception in thread "HTTP-Dispatcher"/);
});

test('jvm-gc-spike-large-heap recovers: GC under a tenth of every second', async () => {
  const { s, out } = await runRealServerRow('jvm-gc-spike-large-heap');
  assertClaimed('jvm-gc-spike-large-heap', s);
  const gc = series(out)
    .map((r) => Number(r['gc_seconds']))
    .filter((g) => Number.isFinite(g));
  assert.ok(gc.length > 0 && Math.max(...gc) < 0.1, `GC seconds per second at most ${Math.max(...gc)}`);
});
