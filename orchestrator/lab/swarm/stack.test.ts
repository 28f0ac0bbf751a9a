import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { COMPOSE_FILE } from '../engine/compose.js';
import { parseExperiment } from '../../spec/load.js';
import {
  dependenciesFirst,
  GENERATED_FILES,
  PLACEMENT_ROLES,
  readCompose,
  STACK_SERVICES,
  stackFile,
  SWARM_REJECTED,
  type StackOptions,
} from './stack.js';

// The stack file generated from the shipped docker-compose.yml (read for real; bind-mounted
// files are read by a stand-in that returns their path, so config names are stable here,
// except Prometheus's configuration, which the stack's is generated from).

type Svc = Record<string, unknown> & {
  deploy: {
    replicas: number;
    endpoint_mode: string;
    placement: { constraints: string[] };
    restart_policy: unknown;
  };
  ports?: { target: number; published: number; mode: string }[];
  command?: unknown;
  volumes?: { type: string; target: string }[];
  configs?: { source: string; target: string }[];
};

const compose = readCompose(COMPOSE_FILE);
const base: StackOptions = {
  stack: 'lab',
  replicas: 3,
  flagsOf: (i) => `--workers 8 --seed ${100 + i}`,
  env: { METABENCH_API_PORT: '9100', METABENCH_REDIS_IMAGE: 'my/redis:1' },
  observers: true,
  generation: 'g1',
};
const standIn = (p: string): string =>
  p.endsWith('/prometheus/prometheus.yml') ? readFileSync(p, 'utf8') : `content of ${p}`;
const gen = (o: Partial<StackOptions> = {}) =>
  stackFile(compose, { ...base, ...o }, standIn) as {
    version: string;
    services: Record<string, Svc>;
    configs: Record<string, { file: string; name: string }>;
    networks: unknown;
    volumes: Record<string, unknown>;
    [GENERATED_FILES]?: Record<string, string>;
  };

test('stack file: no option docker stack deploy refuses or ignores is left in any service', () => {
  const s = gen();
  for (const [name, svc] of Object.entries(s.services)) {
    for (const k of SWARM_REJECTED) assert.ok(!(k in svc), `${name} has ${k}`);
    // Short-syntax ports (a host IP swarm ignores) and bind mounts (files absent on other nodes) are gone too.
    for (const p of svc.ports ?? []) assert.equal(typeof p, 'object', `${name} port ${String(p)}`);
    // (but the engine's socket, which Prometheus's discovery reads: a file every node has).
    for (const v of svc.volumes ?? [])
      if (!(name === 'prometheus' && v.target === '/var/run/docker.sock'))
        assert.equal(v.type, 'volume', `${name} volume ${JSON.stringify(v)}`);
  }
  // What the compose file has that the stack drops is there to drop (the test sees the real file).
  const raw = compose.doc.services as Record<string, Record<string, unknown>>;
  assert.ok('depends_on' in raw.api! && 'build' in raw.api! && 'profiles' in raw['llm-stub']!);
  assert.equal(s.version, '3.8');
});

test('stack file: api replicas are services api, api1…, each one dnsrr task with its seed and its port', () => {
  const s = gen();
  assert.deepEqual(Object.keys(s.services), [
    'api',
    'api1',
    'api2',
    'redis',
    'postgres',
    'toxiproxy',
    'prometheus',
    'control',
  ]);
  for (const [i, name] of ['api', 'api1', 'api2'].entries()) {
    const a = s.services[name]!;
    assert.equal(a.deploy.replicas, 1);
    assert.equal(a.deploy.endpoint_mode, 'dnsrr');
    assert.match(String(a.command), new RegExp(`--workers 8 --seed ${100 + i} `));
    assert.doesNotMatch(String(a.command), /\$\{/);
    assert.deepEqual(a.ports, [{ target: 8080, published: 9100 + i, protocol: 'tcp', mode: 'host' }]);
    assert.deepEqual(a.labels, { 'metabench.generation': 'g1' });
    assert.equal(a.image, 'metabench/api:dev');
  }
  for (const svc of Object.values(s.services)) {
    assert.equal(svc.deploy.endpoint_mode, 'dnsrr', 'no virtual IP: it needs iptables');
    assert.deepEqual(svc.deploy.restart_policy, { condition: 'none' });
  }
  // Variables resolved from the environment (stack deploy reads no env file), else their defaults.
  assert.equal(s.services.redis!.image, 'my/redis:1');
  assert.deepEqual(gen({ replicas: 1 }).services.api!.ports?.[0]?.published, 9100);
  assert.deepEqual(Object.keys(gen({ replicas: 1, observers: false }).services), [
    'api',
    'redis',
    'postgres',
    'toxiproxy',
    'control',
  ]);
});

test('stack file: without flags the api runs the compose file’s default command', () => {
  const s = gen({ flagsOf: undefined, replicas: 2 });
  for (const a of [s.services.api!, s.services.api1!])
    assert.match(
      String(a.command),
      /--port 8080 --workers 8 --work exponential:20ms --redis toxiproxy:26379/,
    );
});

test('stack file: placement constraints land on the services of their role; the rest go on the manager', () => {
  const s = gen({
    placement: {
      api: ['node.labels.role == api'],
      redis: ['node.labels.role == data', 'node.hostname != a'],
    },
  });
  for (const n of ['api', 'api1', 'api2'])
    assert.deepEqual(s.services[n]!.deploy.placement.constraints, ['node.labels.role == api']);
  assert.deepEqual(s.services.redis!.deploy.placement.constraints, [
    'node.labels.role == data',
    'node.hostname != a',
  ]);
  for (const n of ['postgres', 'toxiproxy', 'prometheus', 'control'])
    assert.deepEqual(s.services[n]!.deploy.placement.constraints, ['node.role == manager']);
  const p = gen({ placement: { proxy: ['node.labels.p == 1'], observers: ['node.labels.o == 1'] } });
  assert.deepEqual(p.services.toxiproxy!.deploy.placement.constraints, ['node.labels.p == 1']);
  // Prometheus's task discovery needs a manager's API: it stays on a manager, wherever else it is put.
  assert.deepEqual(p.services.prometheus!.deploy.placement.constraints, [
    'node.labels.o == 1',
    'node.role == manager',
  ]);
});

test('stack file: bind-mounted files become configs named by their content; data directories are the stack’s volumes', () => {
  const s = gen();
  assert.deepEqual(s.services.toxiproxy!.configs, [
    { source: 'toxiproxy-json', target: '/config/toxiproxy.json' },
  ]);
  const c = s.configs['toxiproxy-json']!;
  assert.match(c.file, /\/toxiproxy\/toxiproxy\.json$/);
  assert.match(c.name, /^lab_toxiproxy-json_[0-9a-f]{12}$/);
  const other = stackFile(compose, base, (p) =>
    p.endsWith('.yml') ? standIn(p) : `changed ${p}`,
  ) as typeof s;
  assert.notEqual(other.configs['toxiproxy-json']!.name, c.name, 'a changed file is a new config');
  // The engine refuses config names over 64 characters: a long stack name is cut.
  const long = gen({ stack: 'metabench-swarm-e2e-with-a-much-longer-stack-name-than-usual' });
  for (const x of Object.values(long.configs)) assert.ok(x.name.length <= 64, x.name);
  assert.match(
    long.configs['items-sql']!.name,
    /^metabench-swarm-e2e-with-a-much-longer-st_items-sql_[0-9a-f]{12}$/,
  );
  assert.deepEqual(s.services.postgres!.volumes, [
    { type: 'volume', source: 'postgres-data', target: '/var/lib/postgresql/data' },
  ]);
  assert.deepEqual(s.services.redis!.volumes, [{ type: 'volume', source: 'redis-data', target: '/data' }]);
  assert.deepEqual(s.services.prometheus!.volumes, [
    { type: 'volume', source: 'prometheus-data', target: '/prometheus' },
    { type: 'bind', source: '/var/run/docker.sock', target: '/var/run/docker.sock', read_only: true },
  ]);
  assert.deepEqual(Object.keys(s.volumes), ['redis-data', 'postgres-data', 'prometheus-data']);
  assert.equal(s.services.api!.volumes, undefined);
  assert.equal(s.services.postgres!.configs?.[0]?.target, '/docker-entrypoint-initdb.d/items.sql');
});

test('stack file: replicas whose ports pass 65535 are refused before anything is deployed', () => {
  assert.throws(() => gen({ env: { METABENCH_API_PORT: '65534' } }), /past port 65535/);
});

test('lab.placement: its roles are the stack’s, and a malformed constraint is a spec error naming the field', () => {
  const yaml = (placement: string) => `
name: p
lab:
  api: { workers: 1, work: { dist: constant, mean: 1ms } }
  placement: ${placement}
load: { arrival: constant, rate: 1/s, mix: [{ name: r, share: 100% }] }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 1s, trigger: { kind: pause, target: api, duration: 1s }, observe: 1s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;
  const ok = parseExperiment(
    yaml(`{ ${PLACEMENT_ROLES.map((r) => `${r}: ['node.labels.${r} == yes']`).join(', ')} }`),
    'p.yaml',
  );
  assert.deepEqual(Object.keys(ok.lab!.placement ?? {}), [...PLACEMENT_ROLES]);
  assert.throws(
    () => parseExperiment(yaml(`{ api: ['role=api'] }`), 'p.yaml'),
    (e: Error) =>
      /p\.yaml/.test(e.message) &&
      /lab\.placement\.api/.test(e.message) &&
      /swarm constraint/.test(e.message),
  );
  assert.throws(() => parseExperiment(yaml(`{ grafana: ['node.role == manager'] }`), 'p.yaml'), /placement/);
  assert.ok(STACK_SERVICES.includes('prometheus'));
});

test('stack file: the first deploy has every service but the api replicas, with the whole stack file otherwise', () => {
  const s = gen();
  const first = dependenciesFirst(s) as typeof s;
  // The api connects to Redis and Postgres through the proxy at its start: those come first.
  assert.deepEqual(Object.keys(first.services).sort(), [
    'control',
    'postgres',
    'prometheus',
    'redis',
    'toxiproxy',
  ]);
  assert.deepEqual(
    Object.keys(s.services)
      .filter((n) => !(n in first.services))
      .sort(),
    ['api', 'api1', 'api2'],
  );
  for (const n of Object.keys(first.services)) assert.deepEqual(first.services[n], s.services[n]);
  assert.deepEqual(first.configs, s.configs);
  assert.deepEqual(first.networks, s.networks);
});

type Job = {
  job_name: string;
  static_configs?: { targets: string[] }[];
  dockerswarm_sd_configs?: Record<string, unknown>[];
  relabel_configs?: {
    source_labels?: string[];
    regex?: string;
    action?: string;
    target_label?: string;
    replacement?: string;
  }[];
};

/** Prometheus's relabelling of one target (the subset of its rules swarmApiJob uses): its labels, or undefined when dropped. */
function relabel(job: Job, meta: Record<string, string>): Record<string, string> | undefined {
  const l = { ...meta };
  for (const r of job.relabel_configs ?? []) {
    const value = (r.source_labels ?? []).map((n) => l[n] ?? '').join(';');
    const m = new RegExp(`^(?:${r.regex ?? '(.*)'})$`).exec(value);
    if ((r.action ?? 'replace') === 'keep') {
      if (!m) return undefined;
    } else if (m)
      l[r.target_label!] = (r.replacement ?? '$1').replace(/\$(\d)/g, (_, i: string) => m[Number(i)] ?? '');
  }
  return Object.fromEntries(Object.entries(l).filter(([k, v]) => !k.startsWith('__meta') && v !== ''));
}

test('stack file: Prometheus discovers the stack’s api tasks from the engine and labels each with its replica, task and node', () => {
  const s = gen({ stack: 'lab.x' });
  const prom = s.services.prometheus!;
  // Its configuration is generated with the stack file, a config of its own, named by its content.
  assert.deepEqual(prom.configs, [{ source: 'prometheus-yml', target: '/etc/prometheus/prometheus.yml' }]);
  const cfg = s.configs['prometheus-yml']!;
  const text = s[GENERATED_FILES]?.[cfg.file];
  assert.ok(text, `the stack carries ${cfg.file}`);
  assert.match(cfg.name, /^lab\.x_prometheus-yml_[0-9a-f]{12}$/);
  assert.notEqual(gen().configs['prometheus-yml']!.name, cfg.name, 'another stack, another configuration');
  // The engine's socket, read-only, as root (the socket's owner), on a manager (only a manager lists tasks).
  assert.equal(prom.user, 'root');
  assert.ok(prom.deploy.placement.constraints.includes('node.role == manager'));

  const jobs = (parse(text) as { scrape_configs: Job[] }).scrape_configs;
  // The docker lab's static api jobs are gone; its other jobs stay as they are.
  assert.deepEqual(
    jobs.map((j) => j.job_name),
    ['api', 'llm-stub', 'toxiproxy', 'metabench', 'prometheus'],
  );
  const api = jobs[0]!;
  assert.equal(api.static_configs, undefined);
  assert.deepEqual(api.dockerswarm_sd_configs, [
    {
      host: 'unix:///var/run/docker.sock',
      role: 'tasks',
      port: 8080,
      refresh_interval: '5s',
      filters: [{ name: 'label', values: ['com.docker.stack.namespace=lab.x'] }],
    },
  ]);
  // What the relabelling makes of the targets discovery gives (labels as Prometheus names them).
  const target = (service: string, o: Record<string, string> = {}) =>
    relabel(api, {
      // The task's address on the stack's network, with the port the service publishes (as discovery gives it).
      __address__: '10.0.1.7:19381',
      __meta_dockerswarm_service_name: service,
      __meta_dockerswarm_task_id: 't1',
      __meta_dockerswarm_task_desired_state: 'running',
      __meta_dockerswarm_node_hostname: 'n1',
      __meta_dockerswarm_network_name: 'lab.x_default',
      ...o,
    });
  const labels = (service: string) => ({
    __address__: '10.0.1.7:8080',
    component: 'api',
    task: 't1',
    node: 'n1',
    replica: service,
  });
  assert.deepEqual(target('lab.x_api'), labels('0'));
  assert.deepEqual(target('lab.x_api1'), labels('1'));
  assert.deepEqual(target('lab.x_api12'), labels('12'));
  // Dropped: other services and stacks, a task being shut down, the node's host-mode port (no network).
  for (const [service, o] of [
    ['lab.x_redis', {}],
    ['labAx_api', { __meta_dockerswarm_network_name: 'labAx_default' }],
    ['other_api', { __meta_dockerswarm_network_name: 'other_default' }],
    ['lab.x_api', { __meta_dockerswarm_task_desired_state: 'shutdown' }],
    ['lab.x_api', { __meta_dockerswarm_network_name: '' }],
  ] as const)
    assert.equal(target(service, o), undefined, `${service} ${JSON.stringify(o)}`);
});

test('stack file: a run through the api link has toxiproxy publish one host-mode port per replica, the engine picking each; a plain run publishes none of them', () => {
  const plain = gen().services.toxiproxy!.ports ?? [];
  const linked = gen({ apiLink: true }).services.toxiproxy!.ports ?? [];
  // The fault proxy's API stays unpublished (reached through the control service's forward).
  assert.deepEqual(plain, []);
  assert.deepEqual(
    linked,
    [28080, 28081, 28082].map((target) => ({ target, protocol: 'tcp', mode: 'host' })),
  );
  // Only the fault proxy's ports change: the api replicas keep theirs.
  assert.deepEqual(gen({ apiLink: true }).services.api1, gen().services.api1);
});

test('stack file: only the api replicas publish a port; Redis, Postgres, the fault proxy and Prometheus publish none', () => {
  const s = gen();
  const publishing = Object.entries(s.services)
    .filter(([, svc]) => (svc.ports ?? []).length > 0)
    .map(([n]) => n);
  assert.deepEqual(publishing, ['api', 'api1', 'api2']);
  // The compose file publishes all of them (on 127.0.0.1): the generation is what drops them.
  const raw = compose.doc.services as Record<string, { ports?: unknown[] }>;
  for (const n of ['redis', 'postgres', 'toxiproxy', 'prometheus'])
    assert.ok((raw[n]!.ports ?? []).length > 0, n);
});

test('stack file: the passwords are swarm secrets, read from /run/secrets, never in a command or an environment value', () => {
  const s = gen() as ReturnType<typeof gen> & {
    secrets: Record<string, { external: boolean; name: string }>;
  };
  assert.deepEqual(s.secrets, {
    'redis-password': { external: true, name: 'lab_redis-password' },
    'postgres-password': { external: true, name: 'lab_postgres-password' },
  });
  const secretsOf = (n: string): unknown => (s.services[n] as { secrets?: unknown }).secrets;
  assert.deepEqual(secretsOf('redis'), ['redis-password']);
  assert.deepEqual(secretsOf('postgres'), ['postgres-password']);
  for (const n of ['api', 'api1', 'api2', 'control'])
    assert.deepEqual(secretsOf(n), ['redis-password', 'postgres-password'], n);
  for (const n of ['toxiproxy', 'prometheus']) assert.equal(secretsOf(n), undefined, n);
  // Redis: requirepass from stdin ($$ is stack deploy's literal $), its healthcheck authenticated.
  const redis = s.services.redis! as Svc & {
    command: string[];
    healthcheck: { test: string[]; interval: string };
  };
  assert.deepEqual(redis.command.slice(0, 2), ['sh', '-c']);
  assert.match(
    redis.command[2]!,
    /^exec "\$\$@" - <<EOF\nrequirepass \$\$\(cat \/run\/secrets\/redis-password\)\nEOF$/,
  );
  const raw = compose.doc.services as Record<string, { command: string[] }>;
  assert.deepEqual(redis.command.slice(3), ['redis', ...raw.redis!.command]);
  assert.match(
    redis.healthcheck.test[1]!,
    /REDISCLI_AUTH="\$\$\(cat \/run\/secrets\/redis-password\)" redis-cli ping/,
  );
  assert.equal(redis.healthcheck.interval, '10s', 'the compose file’s timing kept');
  // Postgres: its pg_hba.conf asks every TCP connection for the password.
  const pg = s.services.postgres! as Svc & { command: string[]; environment: Record<string, string> };
  assert.deepEqual(pg.command.slice(-2), ['-c', 'hba_file=/etc/metabench/pg_hba.conf']);
  assert.equal(pg.environment.POSTGRES_PASSWORD_FILE, '/run/secrets/postgres-password');
  const hba = pg.configs!.find((c) => c.target === '/etc/metabench/pg_hba.conf')!;
  const hbaFile = s[GENERATED_FILES]![s.configs[hba.source]!.file]!;
  assert.match(hbaFile, /^host all all all scram-sha-256$/m);
  assert.doesNotMatch(hbaFile, /^host .*trust/m);
  // The api names the files.
  assert.match(
    String(s.services.api!.command),
    / --redis-password-file \/run\/secrets\/redis-password --postgres-password-file \/run\/secrets\/postgres-password$/,
  );
  // No service carries a password itself: every mention of one is a /run/secrets path.
  const text = JSON.stringify(s.services);
  assert.doesNotMatch(text, /requirepass [^$]/);
  assert.doesNotMatch(text, /PASSWORD"\s*:/);
});

test('stack file: the control service runs the pipe from the api image, shipped as a config, with the observers', () => {
  const s = gen({ placement: { observers: ['node.labels.o == 1'] } });
  const c = s.services.control! as Svc & { image: string; entrypoint: string[]; command: string[] };
  assert.equal(c.image, 'metabench/api:dev');
  assert.deepEqual([...c.entrypoint, ...c.command], ['node', '/metabench/control.mjs']);
  assert.deepEqual(c.configs, [{ source: 'control-mjs', target: '/metabench/control.mjs' }]);
  assert.match(s.configs['control-mjs']!.file, /\/services\/control\/pipe\.js$/);
  assert.deepEqual(c.deploy.placement.constraints, ['node.labels.o == 1']);
  assert.equal(c.ports, undefined);
});
