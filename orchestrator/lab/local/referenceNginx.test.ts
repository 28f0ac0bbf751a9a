import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { findReferenceBinary, NGINX } from './binaries.js';
import { referenceTempDir, removeDir, writeTemplate } from './referenceProcess.js';

// The nginx in front of the gunicorn lab: its template filled in, and nginx itself (`nginx -t`,
// Debian's package, as the lab runs it) accepting the result.

test("gunicorn's nginx.conf: every field filled, nginx on the load's port, every request proxied to gunicorn's port, stub_status, accepted by nginx -t", () => {
  const dir = referenceTempDir('nginx-test');
  try {
    const conf = writeTemplate('gunicorn/nginx.conf', dir, 'nginx.conf', {
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
    const r = spawnSync(findReferenceBinary(NGINX), ['-t', '-e', 'stderr', '-p', dir, '-c', conf], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /test is successful/);
  } finally {
    removeDir(dir);
  }
});

test('a field missing from the template is an error naming it', () => {
  const dir = referenceTempDir('nginx-test');
  try {
    assert.throws(
      () =>
        writeTemplate('gunicorn/nginx.conf', dir, 'nginx.conf', {
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
