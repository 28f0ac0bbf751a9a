import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { loadKubernetesSchema } from '../../../test/helpers/kubernetesSchema.js';
import { tempDir } from '../../../test/helpers/cli.js';
import { COMPOSE_FILE, readCompose } from '../engine/compose.js';
import { replicaSeed } from '../labConfig.js';
import {
  COMPONENT,
  durationSeconds,
  kubernetesManifests,
  PART_OF,
  SECRET,
  type KubernetesObject,
  type ManifestOptions,
} from './manifests.js';
import { HEADER, manifestFiles, manifestStream, writeManifests } from './write.js';

// The manifests of the shipped docker-compose.yml (read for real), checked against the
// OpenAPI definitions of Kubernetes v1.36 (vendored: test/fixtures/kubernetes/README.md),
// and what the schema cannot say: references that resolve, and which pod may reach which.

const compose = readCompose(COMPOSE_FILE);
const schema = loadKubernetesSchema();
/** Image and port overrides, as an env file gives them (docker/offline.env is written by a script, not kept). */
const OVERRIDES = {
  METABENCH_API_IMAGE: 'metabench-offline/api:1',
  METABENCH_REDIS_IMAGE: 'local/redis:7',
  METABENCH_API_PORT: '30080',
};

let n = 0;
const counting = (): string => `secret-${++n}`;
const manifests = (o: Partial<ManifestOptions> = {}): KubernetesObject[] =>
  kubernetesManifests(compose, { replicas: 1, env: {}, secret: counting, ...o });

type Spec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const spec = (o: KubernetesObject): Spec => o.spec as Spec;
const find = (objs: readonly KubernetesObject[], kind: string, name: string): KubernetesObject => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name} is generated`);
  return o;
};
const podSpec = (d: KubernetesObject): Spec => spec(d).template.spec as Spec;

test(`every object validates against the Kubernetes ${schema.release} schema: 1 and 4 api replicas, default and overridden images`, () => {
  for (const o of [
    { replicas: 1, env: {} },
    { replicas: 4, env: OVERRIDES },
  ]) {
    const objs = manifests(o);
    assert.deepEqual([...new Set(objs.map((x) => x.kind))].sort(), [
      'ConfigMap',
      'Deployment',
      'NetworkPolicy',
      'Secret',
      'Service',
    ]);
    assert.deepEqual(
      objs.flatMap((x) => schema.problems(x)),
      [],
    );
  }
});

test('the schema check fails a wrong field type, a misspelt field, a missing required field and a wrong apiVersion', () => {
  const objs = manifests();
  const d = structuredClone(find(objs, 'Deployment', 'api')) as Spec;
  d.spec.template.spec.containers[0].ports[0].containerPort = '8080';
  assert.deepEqual(schema.problems(d), [
    'Deployment/api /spec/template/spec/containers/0/ports/0/containerPort: must be integer',
  ]);
  const typo = structuredClone(find(objs, 'Deployment', 'redis')) as Spec;
  typo.spec.template.spec.containers[0].readinesProbe = typo.spec.template.spec.containers[0].readinessProbe;
  assert.match(schema.problems(typo).join('\n'), /additional properties \(readinesProbe\)/);
  const s = structuredClone(find(objs, 'Service', 'redis')) as Spec;
  delete s.spec.ports[0].port;
  s.apiVersion = 'apps/v1';
  assert.deepEqual(schema.problems(s), [
    'Service/redis /apiVersion: apps/v1, not v1',
    "Service/redis /spec/ports/0: must have required property 'port'",
  ]);
  const np = structuredClone(find(objs, 'NetworkPolicy', 'metabench-api-entry')) as Spec;
  np.spec.ingress = { ports: [] };
  assert.match(schema.problems(np).join('\n'), /\/spec\/ingress: must be array/);
  assert.match(schema.problems({ ...d, kind: 'StatefulSet' }).join('\n'), /not among the vendored kinds/);
});

test('every reference resolves: selectors, volumes, mounts, ConfigMap keys, Secret keys', () => {
  const objs = manifests({ replicas: 3 });
  const deployments = objs.filter((o) => o.kind === 'Deployment');
  const secret = find(objs, 'Secret', SECRET) as Spec;
  const labelsOf = (d: KubernetesObject): Record<string, string> => spec(d).template.metadata.labels;
  const selects = (sel: Record<string, string>, labels: Record<string, string>): boolean =>
    Object.entries(sel).every(([k, v]) => labels[k] === v);
  for (const d of deployments) {
    assert.ok(
      selects(spec(d).selector.matchLabels, labelsOf(d)),
      `${d.metadata.name}: its selector takes its pods`,
    );
    const p = podSpec(d);
    const volumes = new Map<string, Spec>((p.volumes ?? []).map((v: Spec) => [v.name, v]));
    for (const c of p.containers as Spec[]) {
      for (const m of c.volumeMounts ?? []) {
        const v = volumes.get(m.name);
        assert.ok(v, `${d.metadata.name}: volume ${m.name} is declared`);
        if (v.configMap) {
          const cm = find(objs, 'ConfigMap', v.configMap.name) as Spec;
          assert.ok(m.subPath in cm.data, `${d.metadata.name}: ${v.configMap.name} has ${m.subPath}`);
        }
      }
      for (const e of c.env ?? [])
        if (e.valueFrom) assert.ok(e.valueFrom.secretKeyRef.key in secret.stringData, `${e.name}'s key`);
    }
    for (const v of volumes.values())
      if (v.secret)
        for (const i of v.secret.items) assert.ok(i.key in secret.stringData, `${i.key} is in the Secret`);
  }
  // Each Service takes exactly its own Deployment's pod, and targets a port that pod has.
  for (const s of objs.filter((o) => o.kind === 'Service')) {
    const pods = deployments.filter((d) => selects(spec(s).selector, labelsOf(d)));
    assert.deepEqual(
      pods.map((d) => d.metadata.name),
      [s.metadata.name],
    );
    const ports = (podSpec(pods[0]!).containers[0].ports as Spec[]).map((p) => p.containerPort);
    for (const p of spec(s).ports)
      assert.ok(ports.includes(p.targetPort), `${s.metadata.name}: ${p.targetPort}`);
  }
  // Names the API server takes: DNS-1123 labels, a Service's starting with a letter.
  for (const o of objs)
    assert.match(o.metadata.name, o.kind === 'Service' ? /^[a-z][a-z0-9-]{0,62}$/ : /^[a-z0-9][a-z0-9.-]*$/);
});

/**
 * Which lab pod may open a connection to which (role to role, by port), by the
 * NetworkPolicies' rules: a pod one or more policies select takes only what one of them
 * allows; `*` is a client outside the lab.
 */
function reachable(objs: readonly KubernetesObject[]): string[] {
  const pods = objs.filter((o) => o.kind === 'Deployment');
  const roles = [...new Set(pods.map((d) => spec(d).template.metadata.labels[COMPONENT] as string))];
  const policies = objs.filter((o) => o.kind === 'NetworkPolicy').map(spec);
  const selects = (sel: Spec | undefined, labels: Record<string, string>): boolean =>
    Object.entries((sel?.matchLabels ?? {}) as Record<string, string>).every(([k, v]) => labels[k] === v);
  const out = new Set<string>();
  for (const to of pods) {
    const labels = spec(to).template.metadata.labels as Record<string, string>;
    const ports = (podSpec(to).containers[0].ports as Spec[]).map((p) => p.containerPort as number);
    const mine = policies.filter((p) => selects(p.podSelector, labels) && p.policyTypes.includes('Ingress'));
    for (const from of ['*', ...roles])
      for (const port of ports) {
        const fromLabels = from === '*' ? undefined : { [PART_OF]: 'metabench', [COMPONENT]: from };
        const allowed =
          mine.length === 0 ||
          mine.some((p) =>
            ((p.ingress ?? []) as Spec[]).some(
              (r) =>
                (r.ports ?? []).some((x: Spec) => x.port === port) &&
                (r.from === undefined ||
                  (fromLabels !== undefined &&
                    (r.from as Spec[]).some((f) => selects(f.podSelector, fromLabels)))),
            ),
          );
        if (allowed) out.add(`${from} -> ${labels[COMPONENT]}:${port}`);
      }
  }
  return [...out].sort();
}

test('the NetworkPolicies expose only the entry: the api links through the proxy, the proxy to the data, Prometheus to the proxy', () => {
  const paths = reachable(manifests({ replicas: 2 }));
  // The entry, from anywhere (clients outside, Prometheus's scrape, the proxy's api link): each api replica's port.
  assert.deepEqual(
    paths.filter((p) => p.endsWith('-> api:8080')).map((p) => p.split(' ')[0]),
    ['*', 'api', 'observers', 'postgres', 'proxy', 'redis'],
  );
  assert.deepEqual(
    paths.filter((p) => !p.endsWith('-> api:8080')),
    [
      'api -> proxy:25432',
      'api -> proxy:26379',
      'api -> proxy:28000',
      'observers -> proxy:8474',
      'proxy -> postgres:5432',
      'proxy -> redis:6379',
    ],
  );
  // Prometheus's scrape of the api does not hang on the entry's rule.
  const scrape = reachable(manifests().filter((o) => o.metadata.name !== 'metabench-api-entry'));
  assert.deepEqual(
    scrape.filter((p) => p.endsWith('-> api:8080')),
    ['observers -> api:8080'],
  );
  // A pod no policy selects takes anything: the check can fail.
  const open = manifests().filter(
    (o) => !['metabench-deny-ingress', 'metabench-redis-from-proxy'].includes(o.metadata.name),
  );
  assert.ok(reachable(open).includes('* -> redis:6379'));
});

test('the entry is a NodePort Service per api replica; the rest are ClusterIP', () => {
  const objs = manifests({ replicas: 2, env: { METABENCH_API_PORT: '30080' } });
  const types = objs.filter((o) => o.kind === 'Service').map((s) => `${s.metadata.name} ${spec(s).type}`);
  assert.deepEqual(types, [
    'api NodePort',
    'api1 NodePort',
    'redis ClusterIP',
    'postgres ClusterIP',
    'toxiproxy ClusterIP',
    'prometheus ClusterIP',
  ]);
  assert.deepEqual(
    ['api', 'api1'].map((s) => spec(find(objs, 'Service', s)).ports[0].nodePort),
    [30080, 30081],
  );
  // 8080 is outside a cluster's NodePort range: the cluster chooses.
  assert.equal(spec(find(manifests(), 'Service', 'api')).ports[0].nodePort, undefined);
});

test('api replica i is a Deployment of its own with its own seed; flags from METABENCH_API_FLAGS', () => {
  const objs = manifests({
    replicas: 3,
    env: { METABENCH_API_FLAGS: '--workers 4 --seed 7 --redis toxiproxy:26379' },
  });
  for (const [i, name] of ['api', 'api1', 'api2'].entries()) {
    const args = podSpec(find(objs, 'Deployment', name)).containers[0].args as string[];
    assert.equal(args[args.indexOf('--seed') + 1], String(replicaSeed(7, i)));
    assert.equal(args.filter((a) => a === '--seed').length, 1);
    assert.ok(args.includes('--workers') && args[args.indexOf('--workers') + 1] === '4');
    assert.equal(spec(find(objs, 'Deployment', name)).strategy.type, 'Recreate');
  }
  const defaults = podSpec(find(manifests(), 'Deployment', 'api')).containers[0].args as string[];
  assert.deepEqual(defaults.slice(0, 5), [
    'dist/services/api/main.js',
    '--host',
    '0.0.0.0',
    '--port',
    '8080',
  ]);
  assert.equal(defaults[defaults.indexOf('--seed') + 1], '1');
});

test('the passwords are generated per call, live only in the Secret, and replace trust', () => {
  const real = (): KubernetesObject[] => kubernetesManifests(compose, { replicas: 2, env: {} });
  const a = real();
  const b = real();
  const secretOf = (objs: KubernetesObject[]): Record<string, string> =>
    (find(objs, 'Secret', SECRET) as Spec).stringData;
  const pw = secretOf(a);
  assert.match(pw['postgres-password']!, /^[\w-]{32}$/);
  assert.notEqual(pw['postgres-password'], pw['redis-password']);
  assert.notEqual(pw['postgres-password'], secretOf(b)['postgres-password']);
  const rest = JSON.stringify(a.filter((o) => o.kind !== 'Secret'));
  for (const v of [pw['postgres-password']!, pw['redis-password']!]) assert.ok(!rest.includes(v));
  const postgres = podSpec(find(a, 'Deployment', 'postgres')).containers[0];
  assert.deepEqual(postgres.env, [
    { name: 'POSTGRES_PASSWORD_FILE', value: '/run/secrets/postgres-password' },
  ]);
  const redis = podSpec(find(a, 'Deployment', 'redis')).containers[0];
  assert.deepEqual(redis.args.slice(0, 2), ['redis-server', '/run/secrets/redis-auth.conf']);
  assert.equal(secretOf(a)['redis-auth.conf'], `requirepass ${pw['redis-password']}\n`);
  const api = podSpec(find(a, 'Deployment', 'api')).containers[0];
  assert.equal(api.env, undefined);
  assert.deepEqual(api.args.slice(-4), [
    '--redis-password-file',
    '/run/secrets/redis-password',
    '--postgres-password-file',
    '/run/secrets/postgres-password',
  ]);
  // Each program gets the files it reads, no more.
  const files = (d: string): string[] =>
    (podSpec(find(a, 'Deployment', d)).volumes as Spec[])
      .filter((v) => v.secret)
      .flatMap((v) => v.secret.items.map((i: Spec) => i.path));
  assert.deepEqual(files('api'), ['redis-password', 'postgres-password']);
  assert.deepEqual(files('redis'), ['redis-auth.conf']);
  assert.deepEqual(files('postgres'), ['postgres-password']);
  assert.equal(podSpec(find(a, 'Deployment', 'toxiproxy')).volumes.filter((v: Spec) => v.secret).length, 0);
});

test('readiness probes run the compose healthchecks, no liveness probe restarts a paused service; one pod at a time, no API token, data in emptyDir', () => {
  const objs = manifests();
  for (const d of objs.filter((o) => o.kind === 'Deployment')) {
    const c = podSpec(d).containers[0];
    assert.equal(c.livenessProbe, undefined);
    assert.equal(c.readinessProbe.periodSeconds, 10, d.metadata.name);
    assert.equal(spec(d).strategy.type, 'Recreate');
    assert.equal(podSpec(d).automountServiceAccountToken, false);
    assert.equal(podSpec(d).enableServiceLinks, false);
  }
  // The images' data directories are emptyDir: a lab keeps nothing.
  for (const [d, dir] of [
    ['redis', '/data'],
    ['postgres', '/var/lib/postgresql/data'],
    ['prometheus', '/prometheus'],
  ] as const) {
    const p = podSpec(find(objs, 'Deployment', d));
    assert.deepEqual(
      p.volumes.find((v: Spec) => v.name === 'data'),
      { name: 'data', emptyDir: {} },
    );
    assert.ok(
      p.containers[0].volumeMounts.some((m: Spec) => m.name === 'data' && m.mountPath === dir),
      d,
    );
  }
  assert.deepEqual(podSpec(find(objs, 'Deployment', 'toxiproxy')).containers[0].readinessProbe.exec.command, [
    '/toxiproxy-cli',
    'list',
  ]);
  assert.equal(durationSeconds('1m30s', 'f'), 90);
  assert.equal(durationSeconds('500ms', 'f'), 1);
  assert.throws(
    () => durationSeconds('10 s', 'service api, healthcheck.interval'),
    /healthcheck.interval: "10 s"/,
  );
});

test('the bind-mounted files are ConfigMaps mounted where compose mounts them', () => {
  const objs = manifests();
  const cm = find(objs, 'ConfigMap', 'toxiproxy-files') as Spec;
  assert.equal(
    cm.data['toxiproxy.json'],
    readFileSync(new URL('../../../../toxiproxy/toxiproxy.json', import.meta.url), 'utf8'),
  );
  assert.deepEqual(podSpec(find(objs, 'Deployment', 'prometheus')).containers[0].volumeMounts, [
    { name: 'files', mountPath: '/etc/prometheus/prometheus.yml', subPath: 'prometheus.yml', readOnly: true },
    { name: 'data', mountPath: '/prometheus' },
  ]);
});

test('a compose option it cannot translate is refused by name', () => {
  const doc = structuredClone(compose.doc) as Spec;
  doc.services.redis.network_mode = 'host';
  assert.throws(
    () => kubernetesManifests({ doc, dir: compose.dir }, { replicas: 1, env: {} }),
    /service redis has "network_mode", which the Kubernetes manifests do not translate/,
  );
});

test('the YAML reads back, as kubectl reads it (YAML 1.1), as the objects', () => {
  const objs = manifests();
  const docs = parseAllDocuments(manifestStream(objs), { version: '1.1' });
  assert.deepEqual(
    (Array.isArray(docs) ? docs : [docs]).map((d) => d.toJS()),
    JSON.parse(JSON.stringify(objs)),
  );
  // Redis's `--appendonly no` stays a string (bare, YAML 1.1 reads it as false).
  assert.match(manifestStream(objs), /- "no"/);
});

test('--out: a file per object, the Secret readable by its owner only; a second run replaces its own files and refuses others', () => {
  const dir = join(tempDir('k8s-manifests'), 'out');
  writeManifests(dir, manifestFiles(manifests({ replicas: 3 })));
  assert.ok(existsSync(join(dir, 'deployment-api2.yaml')));
  assert.equal(statSync(join(dir, `secret-${SECRET}.yaml`)).mode & 0o777, 0o600);
  assert.ok(readFileSync(join(dir, 'service-redis.yaml'), 'utf8').startsWith(`${HEADER}\n`));
  writeManifests(dir, manifestFiles(manifests({ replicas: 1 })));
  assert.ok(!existsSync(join(dir, 'deployment-api2.yaml')), 'an earlier replica is not left behind');
  assert.equal(readdirSync(dir).length, manifests().length);
  writeFileSync(join(dir, 'mine.yaml'), 'kind: Pod\n');
  assert.throws(
    () => writeManifests(dir, manifestFiles(manifests())),
    /holds mine.yaml, not written by lab manifests/,
  );
  assert.ok(existsSync(join(dir, 'mine.yaml')));
});
