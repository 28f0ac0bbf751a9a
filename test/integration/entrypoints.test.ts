import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers/cli.js';

// Each service's own entry point (what the compose file and the lab run): --help prints the
// usage and exits 0; a flag it does not know prints the usage, then the error as its last line
// (what a container log's tail shows), and exits 2. No stack trace either way.

const MAINS = {
  api: 'dist/services/api/main.js',
  faultproxy: 'dist/services/faultproxy/main.js',
  'llm-stub': 'dist/services/llm-stub/main.js',
} as const;

function run(main: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(REPO, main), ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

for (const [name, main] of Object.entries(MAINS)) {
  test(`${name}: --help prints the usage and exits 0`, () => {
    const r = run(main, ['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: /);
    assert.match(r.stdout, /--port|-port/);
    assert.equal(r.stderr, '');
  });

  for (const bad of [['--no-such-flag'], ['--port']])
    test(`${name}: ${bad.join(' ')} prints the usage and one error line, exits 2, no stack trace`, () => {
      const r = run(main, bad);
      assert.equal(r.status, 2, r.stderr);
      const lines = r.stderr.trimEnd().split('\n');
      assert.match(lines[0]!, /^usage: /);
      assert.match(lines.at(-1)!, new RegExp(`^${name}: .*('--port|no-such-flag)`));
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
      assert.equal(r.stdout, '');
    });
}
