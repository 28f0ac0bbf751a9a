import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { COMPOSE_FILE, readCompose } from '../../orchestrator/lab/engine/compose.js';
import {
  kubernetesManifests,
  SECRET,
  type KubernetesObject,
} from '../../orchestrator/lab/kubernetes/manifests.js';
import { findRedisServer } from '../../orchestrator/lab/local/binaries.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { tempDir, waitFor } from '../helpers/cli.js';

// The manifests' Redis as its pod would run it, on this machine: the Deployment's args with
// the Secret's configuration file where the Secret is mounted, and the readiness probe as
// generated, with the variable its container gets from the Secret. Only the port differs
// (a free one, not 6379). No cluster: what is checked is that Redis takes the password from
// the file the manifests give it, refuses a client without it, and that the probe passes.

type Spec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('the manifests’ Redis requires the Secret’s password, and its readiness probe gives it', async (t) => {
  const objs = kubernetesManifests(readCompose(COMPOSE_FILE), { replicas: 1, env: {} });
  const get = (kind: string, name: string): Spec =>
    objs.find((o) => o.kind === kind && o.metadata.name === name) as Spec;
  const secret = get('Secret', SECRET).stringData as Record<string, string>;
  const container = (get('Deployment', 'redis').spec.template.spec as Spec).containers[0] as Spec;
  const mount = (container.volumeMounts as Spec[]).find((m) => m.name === 'credentials')!.mountPath as string;

  // The Secret's files, under a folder standing for the pod's root.
  const root = tempDir('k8s-redis');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const inPod = (path: string): string => join(root, path);
  for (const [key, value] of Object.entries(secret)) {
    mkdirSync(dirname(inPod(`${mount}/${key}`)), { recursive: true });
    writeFileSync(inPod(`${mount}/${key}`), value);
  }
  const args = (container.args as string[]).slice(1).map((a) => (a.startsWith(`${mount}/`) ? inPod(a) : a));
  const port = await freePort('127.0.0.1');
  const redis = spawn(
    findRedisServer(),
    [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', root, '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  redis.stdout.on('data', (d: Buffer) => (log += d.toString()));
  redis.stderr.on('data', (d: Buffer) => (log += d.toString()));
  t.after(() => redis.kill('SIGKILL'));

  const [cli, ...probeArgs] = container.readinessProbe.exec.command as string[];
  const env = Object.fromEntries(
    (container.env as Spec[]).map((e) => [e.name, secret[e.valueFrom.secretKeyRef.key as string]!]),
  );
  const probe = (withEnv: Record<string, string>) =>
    spawnSync(cli!, ['-p', String(port), ...probeArgs], {
      encoding: 'utf8',
      env: { ...process.env, REDISCLI_AUTH: '', ...withEnv },
      timeout: 5000,
    });
  await waitFor(`redis-server on ${port} (log: ${log})`, () =>
    /PONG|NOAUTH/.test(probe({}).stdout + probe({}).stderr),
  );
  const anonymous = probe({});
  assert.match(anonymous.stdout + anonymous.stderr, /NOAUTH/, 'a client without the password is refused');
  const wrong = probe({ REDISCLI_AUTH: 'not-the-password' });
  assert.doesNotMatch(wrong.stdout, /PONG/);
  const ready = probe(env);
  assert.equal(ready.status, 0);
  assert.equal(ready.stdout.trim(), 'PONG');
  assert.ok(
    !objs
      .filter((o: KubernetesObject) => o.kind !== 'Secret')
      .some((o) => JSON.stringify(o).includes(secret['redis-password']!)),
  );
});
