import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { startCli, tempDir } from '../helpers/cli.js';
import { startStallServer } from '../helpers/stallServer.js';
import type { LoadReport } from '../../orchestrator/loadtest/runLoad.js';

test('metabench load measures from the intended time: a 1 s stall in a 20 s run at 500/s shows in p99, and the rate holds', async () => {
  const server = await startStallServer({ stallFromMs: 10_000, stallToMs: 11_000 });
  try {
    const hlog = join(tempDir('load'), 'response.hlog');
    const cli = startCli([
      'load',
      '--url',
      server.url,
      '--rate',
      '500',
      '--duration',
      '20s',
      '--json',
      '--hdr-out',
      hlog,
    ]);
    server.start();
    const r = await cli.done;
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(r.stdout) as LoadReport;
    // Requests intended during the stall waited up to 1 s: with 500 of 10 000 affected,
    // p99 falls inside the stall. A closed-loop tool would report about 1 ms here.
    assert.ok(rep.response.p99! >= 300, `response p99 ${rep.response.p99} ms`);
    assert.ok(rep.response.max! >= 900, `response max ${rep.response.max} ms`);
    // The open loop kept sending during the stall: the achieved rate is the target's.
    assert.ok(Math.abs(rep.ratePerS - 500) / 500 <= 0.02, `achieved ${rep.ratePerS}/s`);
    assert.ok(Math.abs(rep.requests - 10_000) <= 4 * Math.sqrt(10_000), `requests ${rep.requests}`);
    assert.equal(rep.success, 1);
    for (const k of [
      'requests',
      'ratePerS',
      'success',
      'response',
      'service',
      'omissionFactor',
      'lateSends',
      'errors',
    ])
      assert.ok(k in rep, `--json has ${k}`);
    for (const k of ['samples', 'mean', 'p50', 'p90', 'p99', 'p999', 'max'])
      assert.ok(k in rep.response && k in rep.service, k);
    // The HdrHistogram interval log reads back with HdrHistogram's own reader and holds every success.
    const reader = new hdr.HistogramLogReader(readFileSync(hlog, 'utf8'));
    let total = 0;
    let intervals = 0;
    for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) {
      total += h.totalCount;
      intervals++;
    }
    assert.equal(total, rep.response.samples);
    assert.ok(intervals >= 19, `${intervals} intervals`);
  } finally {
    await server.close();
  }
});

test('metabench load refuses bad flags with exit code 2', async () => {
  for (const args of [
    ['load', '--url', 'http://127.0.0.1:1/', '--rate', 'fast', '--duration', '1s'],
    ['load', '--url', 'http://127.0.0.1:1/', '--rate', '10', '--duration', '0s'],
    ['load', '--url', 'not a url', '--rate', '10', '--duration', '1s'],
    ['load', '--rate', '10', '--duration', '1s'],
  ]) {
    const r = await startCli(args).done;
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
});

test('the warm-up never reaches the target: it sees exactly the requests the report counts, each once', async () => {
  const { createServer } = await import('node:http');
  const ids = new Set<string>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    ids.add(String(req.headers['x-origin-id']));
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  try {
    for (const warm of [[], ['--no-warmup']]) {
      requests = 0;
      ids.clear();
      const r = await startCli(['load', '--url', url, '--rate', '300', '--duration', '2s', '--json', ...warm])
        .done;
      assert.equal(r.code, 0, r.stderr);
      const rep = JSON.parse(r.stdout) as LoadReport;
      assert.equal(requests, rep.requests, warm.join(' '));
      assert.equal(ids.size, rep.requests);
      assert.equal(rep.success, 1);
      assert.equal(
        rep.lateSendsBySecond.reduce((a, b) => a + b, 0),
        rep.lateSends,
      );
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
