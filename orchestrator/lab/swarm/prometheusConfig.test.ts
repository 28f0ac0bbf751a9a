import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { parse } from 'yaml';
import { CLIENT_JOB, clientScrapeOf, swarmPrometheusConfig } from './prometheusConfig.js';

const PROMETHEUS_YML = fileURLToPath(new URL('../../../../prometheus/prometheus.yml', import.meta.url));
const compose = readFileSync(PROMETHEUS_YML, 'utf8');
const client = { address: '192.0.2.10:9464', token: 'AbC-123_tok' };

type Job = { job_name: string; [k: string]: unknown };
const jobs = (text: string): Job[] => (parse(text) as { scrape_configs: Job[] }).scrape_configs;

test('swarm Prometheus: with an address, the client job scrapes it with the bearer token; the other jobs are as without', () => {
  const plain = swarmPrometheusConfig('lab', compose);
  const given = swarmPrometheusConfig('lab', compose, 'prometheus.yml', client);
  const job = jobs(given).find((j) => j.job_name === CLIENT_JOB)!;
  assert.deepEqual(job, {
    job_name: CLIENT_JOB,
    authorization: { type: 'Bearer', credentials: client.token },
    static_configs: [{ targets: [client.address], labels: { component: 'client' } }],
  });
  assert.deepEqual(
    jobs(given).map((j) => j.job_name),
    jobs(plain).map((j) => j.job_name),
  );
  assert.deepEqual(
    jobs(given).filter((j) => j.job_name !== CLIENT_JOB),
    jobs(plain).filter((j) => j.job_name !== CLIENT_JOB),
  );
  // Without one: prometheus/prometheus.yml's job, host.docker.internal, unauthenticated.
  const dflt = jobs(plain).find((j) => j.job_name === CLIENT_JOB)!;
  assert.equal(dflt.authorization, undefined);
  assert.match(JSON.stringify(dflt.static_configs), /host\.docker\.internal:9464/);
  // A run reads the address and token back from the deployed configuration.
  assert.deepEqual(clientScrapeOf(given), client);
  assert.equal(clientScrapeOf(plain), undefined);
});

test('promtool check config accepts the generated configuration with the client job’s authorization', (t) => {
  if (spawnSync('promtool', ['--version']).status !== 0) {
    t.skip('promtool is not installed (Debian: apt-get install prometheus)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'metabench-prom-client-'));
  try {
    const file = join(dir, 'prometheus.yml');
    writeFileSync(file, swarmPrometheusConfig('lab', compose, 'prometheus.yml', client));
    const ok = spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' });
    assert.equal(ok.status, 0, `${ok.stdout}${ok.stderr}`);
    assert.match(ok.stdout, /SUCCESS/);
    // The check can fail: an authorization promtool refuses (both credentials and a file) is refused.
    const bad = swarmPrometheusConfig('lab', compose, 'prometheus.yml', client).replace(
      `credentials: ${client.token}`,
      `credentials: ${client.token}\n      credentials_file: /nonexistent`,
    );
    writeFileSync(file, bad);
    assert.notEqual(spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' }).status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
