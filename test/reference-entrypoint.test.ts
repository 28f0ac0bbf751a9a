import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// docker/offline/reference-entrypoint.sh, the reference images' entry point, in its dry run on
// this machine (bash only, nothing started): what it refuses, naming the variable, with exit
// code 2, and that it starts each server as the local runtime does (the same templates filled,
// the same flags as orchestrator/lab/local/reference*.ts), listening on 0.0.0.0 for the load,
// php-fpm and gunicorn on loopback behind nginx.
// The images themselves run in test/integration/reference-images.test.ts.

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(REPO, 'docker', 'offline', 'reference-entrypoint.sh');

interface Result {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
  readonly dir: string;
}

/** The dry run with exactly `env` (and PATH): no METABENCH_ variable of this process leaks in. */
function dryRun(kind: string, env: Record<string, string>): Result {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-entrypoint-'));
  const r = spawnSync('bash', [SCRIPT, kind, '--dry-run'], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      METABENCH_REFERENCE_DIR: join(REPO, 'services', 'reference'),
      METABENCH_RUN_DIR: dir,
      ...env,
    },
  });
  return { code: r.status, out: r.stdout, err: r.stderr, dir };
}

const WORK = { METABENCH_WORKERS: '4', METABENCH_WORK_MS: '100' };
const JVM = { ...WORK, METABENCH_JVM_HEAP_MB: '128' };

test('refused, naming the variable, exit code 2: work not declared, bad numbers, unknown or misplaced settings', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['gunicorn', { METABENCH_WORK_MS: '100' }, /METABENCH_WORKERS is required/],
    ['gunicorn', { METABENCH_WORKERS: '4' }, /METABENCH_WORK_MS is required/],
    [
      'php-fpm',
      { ...WORK, METABENCH_WORKERS: '0' },
      /METABENCH_WORKERS must be a whole number from 1 to 1024 \(got '0'\)/,
    ],
    [
      'php-fpm',
      { ...WORK, METABENCH_WORKERS: '1025' },
      /METABENCH_WORKERS must be a whole number from 1 to 1024/,
    ],
    ['php-fpm', { ...WORK, METABENCH_WORKERS: '2.5' }, /METABENCH_WORKERS must be a whole number/],
    [
      'php-fpm',
      { ...WORK, METABENCH_WORK_MS: '-5' },
      /METABENCH_WORK_MS must be a number of 0 or more \(got '-5'\)/,
    ],
    ['php-fpm', { ...WORK, METABENCH_WORK_MS: '1e3' }, /METABENCH_WORK_MS must be a number of 0 or more/],
    ['gunicorn', { ...WORK, METABENCH_CPU_MS: 'x' }, /METABENCH_CPU_MS must be a number/],
    [
      'gunicorn',
      { ...WORK, METABENCH_WORK_MS: '0', METABENCH_CPU_MS: '0.0' },
      /both 0: the work must be declared/,
    ],
    ['gunicorn', { ...WORK, METABENCH_PORT: '70000' }, /METABENCH_PORT must be a port number/],
    [
      'gunicorn',
      { ...WORK, METABENCH_METRICS_PORT: '8080' },
      /METABENCH_METRICS_PORT must differ from METABENCH_PORT/,
    ],
    [
      'gunicorn',
      { ...WORK, METABENCH_WORKER: '4' },
      /METABENCH_WORKER is not a setting of the reference images/,
    ],
    [
      'php-fpm',
      { ...WORK, METABENCH_JVM_HEAP_MB: '64' },
      /METABENCH_JVM_HEAP_MB applies only to the jvm server/,
    ],
    ['gunicorn', { ...WORK, METABENCH_PORT: '8000' }, /METABENCH_PORT must not be 8000: gunicorn's own port/],
    [
      'php-fpm',
      { ...WORK, METABENCH_METRICS_PORT: '09000' },
      /METABENCH_METRICS_PORT must not be 9000: php-fpm's own port/,
    ],
    ['jvm', WORK, /METABENCH_JVM_HEAP_MB is required/],
    [
      'jvm',
      { ...JVM, METABENCH_JVM_HEAP_MB: '8' },
      /METABENCH_JVM_HEAP_MB must be a whole number of at least 16/,
    ],
    [
      'jvm',
      { ...JVM, METABENCH_JVM_COLLECTOR: 'zgc' },
      /METABENCH_JVM_COLLECTOR must be one of serial, parallel, g1/,
    ],
    [
      'jvm',
      { ...JVM, METABENCH_JVM_ALLOC_BYTES: '64k' },
      /METABENCH_JVM_ALLOC_BYTES must be a whole number of bytes/,
    ],
    [
      'jvm',
      { ...JVM, METABENCH_JVM_HEAP_MB: '16', METABENCH_JVM_ALLOC_BYTES: String(8 * 1024 * 1024) },
      /× METABENCH_WORKERS \(33554432 bytes\) exceeds the heap \(16 MiB\)/,
    ],
    ['jvm', { ...JVM, METABENCH_JVM_QUEUE: '0' }, /METABENCH_JVM_QUEUE must be a whole number of at least 1/],
    ['tomcat', WORK, /usage: reference-entrypoint.sh php-fpm\|gunicorn\|jvm/],
  ];
  for (const [kind, env, message] of cases) {
    const r = dryRun(kind, env);
    rmSync(r.dir, { recursive: true, force: true });
    assert.equal(r.code, 2, `${kind} ${JSON.stringify(env)}: ${r.err}`);
    assert.match(r.err, message);
    assert.match(r.err, new RegExp(`^reference-entrypoint \\(${kind}\\): `));
    assert.equal(r.err.trim().split('\n').length, 1, 'one line, no trace');
    assert.equal(r.out, '', 'nothing would start');
  }
});

test('php-fpm: the local runtime templates filled (no field left), nginx on 0.0.0.0, the pool on loopback, c children', () => {
  const r = dryRun('php-fpm', { ...WORK, METABENCH_CPU_MS: '2.5' });
  try {
    assert.equal(r.code, 0, r.err);
    const nginx = readFileSync(join(r.dir, 'nginx.conf'), 'utf8');
    const fpm = readFileSync(join(r.dir, 'php-fpm.conf'), 'utf8');
    for (const text of [nginx, fpm]) assert.doesNotMatch(text, /\{\{\w+\}\}/);
    assert.match(nginx, /^\s*listen 0\.0\.0\.0:8080 backlog=4096;$/m);
    assert.match(nginx, /fastcgi_pass 127\.0\.0\.1:9000;/);
    assert.match(nginx, /fastcgi_param METABENCH_WORK_MS 100;/);
    assert.match(nginx, /fastcgi_param METABENCH_CPU_MS 2\.5;/);
    assert.match(fpm, /^listen = 127\.0\.0\.1:9000$/m);
    assert.match(fpm, /^pm = static$/m);
    assert.match(fpm, /^pm\.max_children = 4$/m);
    assert.match(fpm, /^user = www-data\ngroup = www-data$/m);
    const lines = r.out.trim().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^php-fpm8\.2 -n -F -O -y .*php-fpm\.conf$/);
    assert.match(lines[1]!, /^nginx -e stderr -p .* -c .*nginx\.conf$/);
    assert.match(lines[2]!, /php -n -S 0\.0\.0\.0:9100 \S+fpm-metrics\.php$/);
  } finally {
    rmSync(r.dir, { recursive: true, force: true });
  }
});

/**
 * The string literals that look like command-line flags in a local runtime module, between two
 * markers of its source (the command it builds): what the image's command must also carry.
 */
function localFlags(file: string, from: string, to: string): string[] {
  const src = readFileSync(join(REPO, 'orchestrator', 'lab', 'local', file), 'utf8');
  const start = src.indexOf(from);
  const end = src.indexOf(to, start);
  assert.ok(start >= 0 && end > start, `${file} still builds its command between ${from} and ${to}`);
  return [...src.slice(start, end).matchAll(/'(-[-A-Za-z][^']*)'/g)].map((m) => m[1]!);
}

test('gunicorn: the local runtime flags, c sync workers on loopback behind nginx on 0.0.0.0, metrics on 9100 with received from nginx', () => {
  const r = dryRun('gunicorn', { ...WORK, METABENCH_WORKERS: '007' });
  try {
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trim().split('\n');
    assert.equal(lines.length, 2, 'gunicorn, then nginx');
    const words = lines[0]!.split(' ');
    for (const flag of localFlags('referenceGunicorn.ts', "'--config'", "'app:application'"))
      assert.ok(words.includes(flag), `gunicorn gets ${flag}`);
    assert.equal(words[words.indexOf('--workers') + 1], '7');
    assert.equal(words[words.indexOf('--bind') + 1], '127.0.0.1:8000');
    for (const w of [
      'METABENCH_HOST=127.0.0.1',
      'METABENCH_PORT=8000',
      'METABENCH_METRICS_HOST=0.0.0.0',
      'METABENCH_METRICS_PORT=9100',
      'METABENCH_NGINX_STATUS_URL=http://127.0.0.1:8080/nginx-status',
    ])
      assert.ok(words.includes(w), w);
    assert.equal(words.at(-1), 'app:application');
    assert.match(lines[1]!, /^nginx -e stderr -p .* -c .*nginx\.conf$/);
    // The local runtime's nginx: front.conf with gunicorn's locations, no field left.
    const nginx = readFileSync(join(r.dir, 'nginx.conf'), 'utf8');
    assert.doesNotMatch(nginx, /\{\{\w+\}\}/);
    assert.match(nginx, /^\s*listen 0\.0\.0\.0:8080 backlog=4096;$/m);
    assert.match(nginx, /proxy_pass http:\/\/127\.0\.0\.1:8000;/);
    assert.match(nginx, /location = \/nginx-status \{\s*stub_status;/);
  } finally {
    rmSync(r.dir, { recursive: true, force: true });
  }
});

test('jvm: the local runtime JVM flags, the heap, collector and work as RefServer arguments', () => {
  const r = dryRun('jvm', {
    ...JVM,
    METABENCH_JVM_COLLECTOR: 'g1',
    METABENCH_JVM_ALLOC_BYTES: '65536',
    METABENCH_JVM_QUEUE: '50',
    METABENCH_PORT: '18080',
  });
  rmSync(r.dir, { recursive: true, force: true });
  assert.equal(r.code, 0, r.err);
  const words = r.out.trim().split(' ');
  const local = localFlags('referenceJvm.ts', 'const args = [', '];');
  assert.ok(local.length >= 4, `flags found in referenceJvm.ts: ${local.join(' ')}`);
  for (const flag of local) assert.ok(words.includes(flag), `the JVM gets ${flag}`);
  for (const w of ['-Xmx128m', '-Xms128m', 'RefServer', 'host=0.0.0.0', 'port=18080', 'metricsPort=9100'])
    assert.ok(words.includes(w), w);
  for (const w of ['workers=4', 'workMs=100', 'cpuMs=0', 'allocBytes=65536', 'queue=50'])
    assert.ok(words.includes(w), w);
  // Unbounded by default (RefServer's queue=0), serial by default.
  const d = dryRun('jvm', JVM);
  rmSync(d.dir, { recursive: true, force: true });
  assert.match(d.out, / -XX:\+UseSerialGC .* queue=0$/m);
});
