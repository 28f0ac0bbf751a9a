import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { findReferenceBinary, NGINX } from './binaries.js';
import { writeNginxConf } from './referenceNginx.js';
import { referenceTempDir, removeDir } from './referenceProcess.js';

// The nginx in front of the PHP-FPM and gunicorn labs: one frame (nginx/front.conf) with each
// server's locations, filled in, and nginx itself (`nginx -t`, Debian's package, as the lab
// runs it) accepting the result.

/** `nginx -t` on `conf`, as the lab starts it (prefix `dir`, error log on stderr). */
function assertNginxAccepts(dir: string, conf: string): void {
  const r = spawnSync(findReferenceBinary(NGINX), ['-t', '-e', 'stderr', '-p', dir, '-c', conf], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /test is successful/);
}

test("gunicorn's nginx.conf: every field filled, nginx on the load's port, every request proxied to gunicorn's port, stub_status, accepted by nginx -t", () => {
  const dir = referenceTempDir('nginx-test');
  try {
    const conf = writeNginxConf('gunicorn', dir, {
      dir,
      host: '127.0.0.1',
      listenHost: '127.0.0.1',
      port: 18080,
      upstreamPort: 18081,
    });
    const text = readFileSync(conf, 'utf8');
    assert.doesNotMatch(text, /\{\{\w+\}\}/);
    assert.match(text, /^\s*listen 127\.0\.0\.1:18080 backlog=4096;$/m);
    assert.match(text, /^\s*location \/ \{\s*proxy_pass http:\/\/127\.0\.0\.1:18081;/m);
    assert.match(text, /location = \/nginx-status \{\s*stub_status;/);
    assertNginxAccepts(dir, conf);
  } finally {
    removeDir(dir);
  }
});

test("php-fpm's nginx.conf: the same frame, its locations passing every request to the pool over FastCGI, accepted by nginx -t", () => {
  const dir = referenceTempDir('nginx-test');
  try {
    const conf = writeNginxConf('php-fpm', dir, {
      dir,
      host: '127.0.0.1',
      listenHost: '127.0.0.1',
      port: 18080,
      fpmPort: 18082,
      workMs: 100,
      cpuMs: 0,
      scripts: dir,
    });
    const text = readFileSync(conf, 'utf8');
    assert.doesNotMatch(text, /\{\{\w+\}\}/);
    assert.match(text, /^\s*listen 127\.0\.0\.1:18080 backlog=4096;$/m);
    assert.match(text, /^\s*location \/ \{\s*fastcgi_pass 127\.0\.0\.1:18082;/m);
    assert.match(text, /fastcgi_param METABENCH_WORK_MS 100;/);
    assert.match(text, /location = \/nginx-status \{\s*stub_status;/);
    assertNginxAccepts(dir, conf);
  } finally {
    removeDir(dir);
  }
});

test('a field missing from the template is an error naming it', () => {
  const dir = referenceTempDir('nginx-test');
  try {
    assert.throws(
      () =>
        writeNginxConf('gunicorn', dir, {
          dir,
          host: '127.0.0.1',
          listenHost: '127.0.0.1',
          port: 1,
        }),
      /template field upstreamPort has no value/,
    );
  } finally {
    removeDir(dir);
  }
});
