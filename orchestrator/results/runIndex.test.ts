import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendIndex, formatIndex, indexFor, readIndex } from './runIndex.js';

const entry = {
  kind: 'run' as const,
  file: 'experiments/retry-storm.yaml',
  runtime: 'sim',
  scale: 0.2,
  outcome: 'metastable',
  validity: 'valid',
};

test('results/index: one line per folder directly in the root, read back as written', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'metabench-index-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.equal(readIndex(root), null);
  const dir = join(root, '2026-12-05-retry-storm-sim-s0.2');
  mkdirSync(dir);
  assert.equal(appendIndex(dir, entry, root, new Date('2026-12-05T13:58:02.5Z')), join(root, 'index'));
  appendIndex(
    join(root, 'b'),
    { ...entry, kind: 'sweep', outcome: 'interrupted:\tx', validity: '1/2 valid' },
    root,
  );
  const text = readFileSync(join(root, 'index'), 'utf8').split('\n');
  assert.equal(text[0], '# date\tkind\tfile\truntime\tscale\toutcome\tvalidity\tfolder');
  assert.equal(
    text[1],
    '2026-12-05T13:58:02Z\trun\texperiments/retry-storm.yaml\tsim\t0.2\tmetastable\tvalid\t2026-12-05-retry-storm-sim-s0.2',
  );
  const back = readIndex(root)!;
  assert.equal(back.length, 2);
  assert.deepEqual(back[0], {
    ...entry,
    date: '2026-12-05T13:58:02Z',
    folder: '2026-12-05-retry-storm-sim-s0.2',
  });
  // A tab in a field would split its column: it is written as a space.
  assert.equal(back[1]!.outcome, 'interrupted: x');
  assert.equal(back[1]!.kind, 'sweep');
  const table = formatIndex(back).split('\n');
  assert.match(table[0]!, /^date\s+kind\s+file\s+runtime\s+scale\s+outcome\s+validity\s+folder$/);
  assert.equal(table[1]!.indexOf('sim'), table[0]!.indexOf('runtime'));
});

test('a folder inside another (a sweep point, a twin) or outside the root is not indexed', () => {
  assert.equal(indexFor('results/2026-12-05-a-sim-s1', 'results'), join('results', 'index'));
  assert.equal(indexFor('results/2026-12-05-a-sim-s1/point-1', 'results'), null);
  assert.equal(indexFor('/elsewhere/mine', 'results'), null);
});
