import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempDir } from '../helpers/cli.js';

// `metabench export grafana --env-file FILE` finds the lab's Grafana on the port that file gives
// (METABENCH_GRAFANA_PORT, as `lab up --env-file FILE` published it). A stand-in Grafana on
// loopback answers the dashboard and the render.

test('export grafana --env-file: renders from the Grafana on the env file’s METABENCH_GRAFANA_PORT', async () => {
  const seen: string[] = [];
  const grafana = createServer((req, res) => {
    seen.push(req.url ?? '');
    if (req.url?.startsWith('/api/dashboards/uid/'))
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ dashboard: { panels: [{ id: 2, title: 'Goodput', type: 'timeseries' }] } }));
    else if (req.url?.startsWith('/render/'))
      res
        .writeHead(200, { 'content-type': 'image/png' })
        .end(Buffer.from('\x89PNG\r\n\x1a\nstand-in', 'latin1'));
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (grafana.address() as AddressInfo).port;
    const dir = tempDir('export-grafana');
    mkdirSync(join(dir, 'run-1'));
    writeFileSync(
      join(dir, 'run-1', 'manifest.json'),
      JSON.stringify({ startedAt: new Date().toISOString(), plan: { totalMs: 60_000 } }),
    );
    const envFile = join(dir, 'lab.env');
    writeFileSync(envFile, `# as docker/offline.env\nMETABENCH_GRAFANA_PORT=${port}\n`);
    const r = await runCli(['export', 'grafana', dir, '--env-file', envFile], {
      METABENCH_GRAFANA_URL: '',
      METABENCH_GRAFANA_PORT: '',
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`1 panels exported from http://127\\.0\\.0\\.1:${port}`));
    assert.deepEqual(readdirSync(join(dir, 'grafana')), ['02-goodput.png']);
    assert.ok(
      seen.some((u) => u.startsWith('/render/')),
      `requests: ${seen.join(', ')}`,
    );
  } finally {
    grafana.close();
  }
});

test('export grafana refuses a simulated results folder at once, with its own message, asking no Grafana', async () => {
  const seen: string[] = [];
  const grafana = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (grafana.address() as AddressInfo).port;
    const dir = tempDir('export-grafana-sim');
    mkdirSync(join(dir, 'run-1'));
    writeFileSync(
      join(dir, 'run-1', 'manifest.json'),
      JSON.stringify({ startedAt: new Date().toISOString(), runtime: 'sim', plan: { totalMs: 60_000 } }),
    );
    const r = await runCli(['export', 'grafana', dir, '--grafana-url', `http://127.0.0.1:${port}`]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /is a simulated run .*runtime sim/);
    assert.doesNotMatch(r.stderr, /lab could not start|Error:\s+at /);
    assert.deepEqual(seen, []);
  } finally {
    grafana.close();
  }
});
