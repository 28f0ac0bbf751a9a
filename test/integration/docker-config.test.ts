import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { parse } from 'yaml';
import { isBenchError } from '../../foundation/errors.js';
import { runCompose } from '../../orchestrator/lab/engine/compose.js';
import { readApiService, replicaOverride } from '../../orchestrator/lab/engine/replicas.js';
import { apiLinkOverride } from '../../orchestrator/lab/engine/apiLinkPorts.js';
import { GENERATED_FILES, readCompose, stackFile } from '../../orchestrator/lab/swarm/stack.js';
import { REPO } from '../helpers/cli.js';

// The lab's configuration files as their own tools read them, where those tools are installed.

function has(bin: string, args: string[]): boolean {
  return spawnSync(bin, args, { stdio: 'ignore' }).status === 0;
}

function composeConfig(): { bin: string; args: string[] } | undefined {
  if (has('docker-compose', ['version'])) return { bin: 'docker-compose', args: [] };
  if (has('docker', ['compose', 'version'])) return { bin: 'docker', args: ['compose'] };
  return undefined;
}

/** Compose's normalized duration ("10s", "1m30s") in seconds. */
function seconds(d: string | undefined): number {
  let total = 0;
  for (const [, n, unit] of (d ?? '').matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g))
    total += Number(n) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[unit!]!;
  return total;
}

test('docker-compose config accepts docker-compose.yml: ports on 127.0.0.1, images overridable, healthchecks at least 10 s apart', (t) => {
  const c = composeConfig();
  if (!c) {
    t.skip('neither docker-compose nor docker compose is installed');
    return;
  }
  const r = spawnSync(
    c.bin,
    [...c.args, '-f', join(REPO, 'docker-compose.yml'), '--profile', 'llm', 'config'],
    {
      encoding: 'utf8',
      env: { ...process.env, METABENCH_REDIS_IMAGE: 'my/redis:1', METABENCH_API_PORT: '18081' },
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const cfg = parse(r.stdout) as {
    services: Record<
      string,
      {
        image?: string;
        ports?: (string | { host_ip?: string; published?: string | number })[];
        healthcheck?: { interval?: string };
      }
    >;
  };
  assert.equal(cfg.services.redis?.image, 'my/redis:1', 'METABENCH_REDIS_IMAGE overrides the image');
  for (const [name, s] of Object.entries(cfg.services)) {
    for (const p of s.ports ?? []) {
      const ip = typeof p === 'string' ? p.split(':')[0] : p.host_ip;
      assert.equal(ip, '127.0.0.1', `${name} publishes ${JSON.stringify(p)} on 127.0.0.1 only`);
    }
    if (name === 'grafana-image-renderer') continue;
    assert.ok(s.healthcheck, `${name} has a healthcheck`);
    // A check is a process started in the container; every 2 s they made the generator beside
    // the lab late (docker-compose.yml says what was measured).
    assert.ok(
      seconds(s.healthcheck.interval) >= 10,
      `${name} checks its health every ${s.healthcheck.interval}, at least 10 s apart`,
    );
  }
  const api = cfg.services.api!.ports![0]!;
  assert.match(typeof api === 'string' ? api : String(api.published), /18081/);
  assert.deepEqual(Object.keys(cfg.services).sort(), [
    'api',
    'grafana',
    'grafana-image-renderer',
    'llm-stub',
    'postgres',
    'prometheus',
    'redis',
    'toxiproxy',
  ]);
});

/** A compose service as `config` prints it (v1: short forms; v2: long ones). */
interface ConfigService {
  command?: string | string[];
  ports?: (string | { host_ip?: string; published?: string | number; target?: unknown })[];
}

/**
 * docker-compose.yml merged with an override document, as compose's own `config` prints it;
 * undefined (the test skipped) where compose is not installed.
 */
function mergedConfig(
  t: TestContext,
  override: object,
  env: Record<string, string>,
): { services: Record<string, ConfigService> } | undefined {
  const c = composeConfig();
  if (!c) {
    t.skip('neither docker-compose nor docker compose is installed');
    return undefined;
  }
  const file = join(mkdtempSync(join(tmpdir(), 'metabench-override-config-')), 'lab-override.json');
  writeFileSync(file, JSON.stringify(override));
  const r = spawnSync(c.bin, [...c.args, '-f', join(REPO, 'docker-compose.yml'), '-f', file, 'config'], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return parse(r.stdout) as { services: Record<string, ConfigService> };
}

test('compose merges the api replicas’ override: api1 and api2, each its own port and seed, the api as before', (t) => {
  const cfg = mergedConfig(
    t,
    replicaOverride(readApiService(), 3, 18090, (i) => `--workers 4 --seed ${i + 1}`)!,
    { METABENCH_API_PORT: '18090', METABENCH_API_FLAGS: '--workers 4 --seed 1' },
  );
  if (!cfg) return;
  const port = (s: string): string => {
    const p = cfg.services[s]!.ports![0]!;
    return typeof p === 'string' ? p : String(p.published);
  };
  const command = (s: string): string => [cfg.services[s]!.command ?? []].flat().join(' ');
  for (const [s, i] of [
    ['api', 0],
    ['api1', 1],
    ['api2', 2],
  ] as const) {
    assert.match(port(s), new RegExp(String(18090 + i)), `${s} publishes ${18090 + i}`);
    assert.match(command(s), new RegExp(`--seed ${i + 1}$`), `${s}: ${command(s)}`);
  }
});

test('compose merges the api link’s override: toxiproxy keeps its API port and publishes one link per replica, on 127.0.0.1 only, on a port the engine picks', (t) => {
  const cfg = mergedConfig(t, { services: apiLinkOverride(2) }, { METABENCH_TOXIPROXY_PORT: '18474' });
  if (!cfg) return;
  const ports = cfg.services.toxiproxy!.ports!.map((p) =>
    // v1 prints the short form with its protocol, v2 the long form.
    (typeof p === 'string'
      ? p
      : `${p.host_ip ?? ''}:${String(p.published ?? '')}:${String(p.target)}`
    ).replace(/\/tcp$/, ''),
  );
  assert.deepEqual(ports.sort(), ['127.0.0.1:18474:8474', '127.0.0.1::28080', '127.0.0.1::28081'].sort());
});

test('promtool check config accepts prometheus/prometheus.yml', (t) => {
  if (!has('promtool', ['--version'])) {
    t.skip('promtool is not installed (Debian: apt-get install prometheus)');
    return;
  }
  const r = spawnSync('promtool', ['check', 'config', join(REPO, 'prometheus', 'prometheus.yml')], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /SUCCESS/);
});

test('promtool check config accepts the swarm stack’s generated Prometheus configuration (task discovery)', (t) => {
  if (!has('promtool', ['--version'])) {
    t.skip('promtool is not installed (Debian: apt-get install prometheus)');
    return;
  }
  const doc = stackFile(readCompose(join(REPO, 'docker-compose.yml')), {
    stack: 'metabench',
    replicas: 2,
    env: {},
    observers: true,
  });
  // Generated with the stack: Prometheus's configuration, and Postgres's pg_hba.conf.
  const files = Object.values(doc[GENERATED_FILES] as Record<string, string>).filter((f) =>
    f.includes('scrape_configs'),
  );
  assert.equal(files.length, 1);
  const file = join(mkdtempSync(join(tmpdir(), 'metabench-prom-')), 'prometheus.yml');
  writeFileSync(file, files[0]!);
  // promtool refuses a discovery its build left out: Debian's leaves some out, not this one.
  const r = spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /SUCCESS/);
  assert.match(files[0]!, /dockerswarm_sd_configs/);
});

test('a failed compose command reports its whole error text, not a cut of it', async (t) => {
  if (!composeConfig()) {
    t.skip('neither docker-compose nor docker compose is installed');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'metabench-compose-'));
  const file = join(dir, 'docker-compose.yml');
  // An unknown key longer than any cut: compose names it in its error.
  const key = `x_${'k'.repeat(300)}_end`;
  writeFileSync(file, `services:\n  svc:\n    image: busybox\n    ${key}: 1\n`);
  await assert.rejects(
    runCompose({ project: 'metabench-config-test', file }, ['config']),
    (e: unknown) =>
      isBenchError(e) && e.message.includes(key) && /config failed \(exit \d+\): /.test(e.message),
  );
});
