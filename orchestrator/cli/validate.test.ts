import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, runCli, tempDir } from '../../test/helpers/cli.js';

const good = readFileSync(join(REPO, 'experiments/retry-storm.yaml'), 'utf8');
const swap = (from: string, to: string): string => {
  assert.ok(good.includes(from), from);
  return good.replace(from, to);
};

function bomb(): string {
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x]'];
  for (const [n, prev] of [
    ['b', 'a'],
    ['c', 'b'],
    ['d', 'c'],
    ['e', 'd'],
    ['f', 'e'],
    ['g', 'f'],
  ])
    lines.push(`${n}: &${n} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  return lines.join('\n');
}

/** The malformed corpus: file name → [contents, expected line (null: the file has no line to point at), message]. */
const CORPUS: Record<string, [string | Buffer, number | null, RegExp]> = {
  'syntax.yaml': ['name: x\nlab: [\n', 3, /YAML syntax/],
  'unknown-key.yaml': [
    swap('  timeout: 500ms', '  timout: 500ms'),
    16,
    /client\.timout: unknown field; did you mean "timeout"/,
  ],
  'wrong-type.yaml': [swap('workers: 8', 'workers: eight'), 11, /lab\.api\.workers: expected a whole number/],
  'missing-section.yaml': [good.replace(/^schedule:\n(?: {2}.*\n)+/m, ''), null, /schedule: is required/],
  'bad-unit.yaml': [
    swap('timeout: 500ms', 'timeout: 500 parsecs'),
    16,
    /client\.timeout: "500 parsecs" is not a duration/,
  ],
  'out-of-range.yaml': [swap('workers: 8', 'workers: 99999999999'), 11, /lab\.api\.workers: must be at most/],
  'negative.yaml': [swap('seed: 42', 'seed: -42'), 28, /seed: must be at least 0/],
  'huge.yaml': [swap('timeout: 500ms', 'timeout: 1e400ms'), 16, /client\.timeout: .*not a duration/],
  'trigger-kind.yaml': [swap('kind: pause', 'kind: explode'), 24, /schedule\.trigger\.kind/],
  'trigger-target.yaml': [swap('target: api', 'target: mainframe'), 24, /schedule\.trigger\.target/],
  'bomb.yaml': [bomb(), null, /alias/i],
  'empty.yaml': ['', null, /empty/],
  'binary.yaml': [Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0xff, 0xfe]), null, /not text/],
  'bad.sweep.yaml': [
    'name: s\nexperiment: ../good.yaml\nfactors:\n  - { path: load.rate, values: [fast] }\n  - { pth: x }\n',
    5,
    /factors\.1\.pth: unknown field; did you mean "path"/,
  ],
};

test('a corpus of malformed files: each exits 3 with its file name, a line where one exists, and no stack trace', async () => {
  const dir = tempDir('corpus');
  writeFileSync(join(dir, 'good.yaml'), good);
  const files = Object.keys(CORPUS).map((name) => {
    const f = join(dir, name.endsWith('.sweep.yaml') ? `sub-${name}` : name);
    return f;
  });
  Object.entries(CORPUS).forEach(([, [text]], i) => writeFileSync(files[i]!, text));
  // sweeps name their experiment relative to themselves: ../good.yaml from a sibling folder is dir/../good.yaml
  writeFileSync(
    files[files.length - 1]!,
    String(CORPUS['bad.sweep.yaml']![0]).replace('../good.yaml', 'good.yaml'),
  );

  // All at once: every problem of every file, exit 3.
  const all = await runCli(['validate', join(dir, 'good.yaml'), ...files]);
  assert.equal(all.code, 3, all.stderr);
  assert.match(all.stdout, /good\.yaml: ok/);
  assert.doesNotMatch(all.stderr, /\n\s+at /);

  // One by one: each alone exits 3 and points at itself.
  await Promise.all(
    Object.entries(CORPUS).map(async ([, [, line, message]], i) => {
      const f = files[i]!;
      const r = await runCli(['validate', f]);
      assert.equal(r.code, 3, `${f}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at |internal error/, f);
      const first = r.stderr.split('\n').find((l) => message.test(l));
      assert.ok(first, `${f}: expected ${message} in\n${r.stderr}`);
      assert.ok(first.startsWith(line === null ? f : `${f}:${line}:`), `${f}: ${first}`);
    }),
  );
  // A file with a line to point at is in all.stderr with it too.
  assert.match(all.stderr, /unknown-key\.yaml:16:\d+: client\.timout/);
});
