import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BenchError } from '../../../foundation/errors.js';
import { findRedisServer, onPath } from './binaries.js';

test('a missing redis-server is a preflight error (exit code 4) that names the package to install', () => {
  const saved = { path: process.env.PATH, redis: process.env.METABENCH_REDIS_SERVER };
  process.env.PATH = '/nonexistent-metabench-dir';
  delete process.env.METABENCH_REDIS_SERVER;
  try {
    assert.throws(findRedisServer, (err: unknown) => {
      assert.ok(err instanceof BenchError);
      assert.equal(err.code, 'E_LAB_PREFLIGHT');
      assert.equal(err.exitCode, 4);
      assert.match(err.message, /apt-get install redis-server/);
      return true;
    });
  } finally {
    process.env.PATH = saved.path;
    if (saved.redis !== undefined) process.env.METABENCH_REDIS_SERVER = saved.redis;
  }
});

test('onPath finds an executable on the PATH, and nothing else', () => {
  assert.equal(onPath('sh', '/nonexistent-metabench-dir:/bin'), '/bin/sh');
  assert.equal(onPath('no-such-program-metabench', '/bin:/usr/bin'), undefined);
});
