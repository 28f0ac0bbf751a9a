import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BenchError } from '../../../foundation/errors.js';
import { checkReferenceOptions, predictedCapacityPerS, type ReferenceOptions } from './referenceServer.js';
import { fillTemplate } from './referenceProcess.js';
import { findReferenceBinary, NGINX, PHP_FPM, GUNICORN, JAVA, JAVAC } from './binaries.js';

test('predicted capacity is c / S, S counting the declared CPU too', () => {
  assert.equal(predictedCapacityPerS(8, 100), 80);
  assert.equal(predictedCapacityPerS(4, 40, 10), 80);
});

const ok: ReferenceOptions = { kind: 'gunicorn', workers: 8, workMs: 100 };
const refused = (o: Partial<ReferenceOptions> & Record<string, unknown>, why: RegExp): void =>
  assert.throws(
    () => checkReferenceOptions({ ...ok, ...o } as ReferenceOptions),
    (err: unknown) => err instanceof BenchError && err.exitCode === 2 && why.test(err.message),
  );

test('options that could never give a server of predictable capacity are refused, naming the field', () => {
  checkReferenceOptions(ok);
  checkReferenceOptions({
    kind: 'jvm',
    workers: 4,
    workMs: 50,
    jvm: { heapMb: 64, collector: 'g1', allocBytes: 1024 },
  });
  refused({ workers: 0 }, /workers must be a whole number/);
  refused({ workers: 2.5 }, /workers must be a whole number/);
  refused({ workMs: 0 }, /workMs and cpuMs are both 0/);
  refused({ workMs: -1 }, /workMs must be 0 or more/);
  refused({ port: 70000 }, /port must be a port number/);
  refused({ port: 9000, metricsPort: 9000 }, /metricsPort must differ from port/);
  refused({ kind: 'tomcat' as never }, /kind must be one of php-fpm, gunicorn, jvm/);
  refused({ kind: 'jvm' }, /jvm is required/);
  refused({ jvm: { heapMb: 64, collector: 'g1', allocBytes: 0 } }, /jvm applies only to the jvm server/);
  refused(
    { kind: 'jvm', jvm: { heapMb: 8, collector: 'g1', allocBytes: 0 } },
    /jvm.heapMb must be a whole number of at least 16/,
  );
  refused(
    { kind: 'jvm', jvm: { heapMb: 64, collector: 'zgc' as never, allocBytes: 0 } },
    /jvm.collector must be one of serial, parallel, g1/,
  );
  refused(
    { kind: 'jvm', workers: 8, jvm: { heapMb: 16, collector: 'serial', allocBytes: 4 * 2 ** 20 } },
    /exceeds the heap/,
  );
  refused(
    { kind: 'jvm', jvm: { heapMb: 64, collector: 'serial', allocBytes: 0, queue: 0 } },
    /jvm.queue must be a whole number of at least 1/,
  );
});

test('a missing reference program is a preflight error (exit code 4) with the install command', () => {
  const saved = { ...process.env };
  process.env.PATH = '/nonexistent-metabench-dir';
  try {
    for (const [b, pkg] of [
      [NGINX, 'nginx'],
      [PHP_FPM, 'php8.2-fpm'],
      [GUNICORN, 'gunicorn python3-prometheus-client'],
      [JAVA, 'openjdk-17-jdk-headless'],
      [JAVAC, 'openjdk-17-jdk-headless'],
    ] as const) {
      delete process.env[b.env];
      // /usr/sbin is searched too (Debian's nginx and php-fpm live there): look in an empty PATH only.
      assert.throws(
        () => findReferenceBinary({ ...b, names: [`${b.names[0]}-not-installed-metabench`] }),
        (err: unknown) => {
          assert.ok(err instanceof BenchError);
          assert.equal(err.exitCode, 4);
          assert.ok(err.message.includes(`apt-get install ${pkg}`), err.message);
          assert.ok(err.message.includes(b.env), err.message);
          return true;
        },
      );
    }
    process.env.METABENCH_NGINX = '/opt/nginx/sbin/nginx';
    assert.equal(findReferenceBinary(NGINX), '/opt/nginx/sbin/nginx');
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});

test('a configuration template is filled in, and a field left without a value is an error', () => {
  assert.equal(
    fillTemplate('listen {{host}}:{{port}};', { host: '127.0.0.1', port: 8080 }),
    'listen 127.0.0.1:8080;',
  );
  assert.throws(
    () => fillTemplate('pm.max_children = {{workers}}', {}),
    /template field workers has no value/,
  );
});
