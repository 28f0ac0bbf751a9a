import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { runCli, tempDir } from '../../test/helpers/cli.js';
import { loadKubernetesSchema } from '../../test/helpers/kubernetesSchema.js';

// `metabench lab manifests` as a user runs it: the files it writes (or the stream it prints)
// read back as kubectl reads them (YAML 1.1) and validate against the vendored schema.

const schema = loadKubernetesSchema();

test('lab manifests --kubernetes --out DIR --replicas 2 --env-file F: a valid file per object, the env file’s image and port', async () => {
  const dir = tempDir('manifests-cli');
  const envFile = join(dir, 'lab.env');
  writeFileSync(envFile, 'METABENCH_API_IMAGE=registry.example/metabench-api:7\nMETABENCH_API_PORT=30100\n');
  const out = join(dir, 'k8s');
  const r = await runCli([
    ...'lab manifests --kubernetes --replicas 2'.split(' '),
    '--out',
    out,
    '--env-file',
    envFile,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^lab manifests: 22 objects in .*k8s \(kubectl apply -f .*k8s\); secret-metabench-credentials.yaml holds/,
  );
  const files = readdirSync(out).sort();
  assert.equal(files.length, 22);
  for (const f of files) {
    const o: unknown = parse(readFileSync(join(out, f), 'utf8'), { version: '1.1' });
    assert.deepEqual(schema.problems(o), [], f);
  }
  const api1 = parse(readFileSync(join(out, 'deployment-api1.yaml'), 'utf8'), { version: '1.1' });
  assert.equal(api1.spec.template.spec.containers[0].image, 'registry.example/metabench-api:7');
  const svc = parse(readFileSync(join(out, 'service-api1.yaml'), 'utf8'), { version: '1.1' });
  assert.equal(svc.spec.ports[0].nodePort, 30101);
  assert.equal(statSync(join(out, 'secret-metabench-credentials.yaml')).mode & 0o777, 0o600);
});

test('lab manifests --kubernetes without --out: one stream of valid objects on stdout', async () => {
  const r = await runCli(['lab', 'manifests', '--kubernetes']);
  assert.equal(r.code, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout, { version: '1.1' });
  const objects = (Array.isArray(docs) ? docs : [docs]).map((d) => d.toJS() as { kind: string });
  assert.equal(objects.length, 20);
  assert.deepEqual(
    objects.flatMap((o) => schema.problems(o)),
    [],
  );
});

test('lab manifests without --kubernetes, or with a bad --replicas: a usage error, exit 2, nothing written', async () => {
  const none = await runCli(['lab', 'manifests']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /lab manifests: say which kind: --kubernetes/);
  assert.equal(none.stdout, '');
  const bad = await runCli(['lab', 'manifests', '--kubernetes', '--replicas', '0']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--replicas/);
  assert.equal(bad.stdout, '');
});
