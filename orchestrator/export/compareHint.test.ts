import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareHint, sh } from './compareHint.js';

test('compareHint unpacks the bundle beside the results and compares the bundled folder with them', () => {
  assert.equal(
    compareHint('b.tar.gz', 'results/re/'),
    'mkdir -p results/re-bundled && tar -xzf b.tar.gz -C results/re-bundled && metabench compare results/re-bundled/bundle/results results/re/',
  );
});

test('a sweep’s hint compares each point with its bundled original', () => {
  assert.equal(
    compareHint('s.tar.gz', 'out/re', ['point-1', 'point-2']),
    'mkdir -p out/re-bundled && tar -xzf s.tar.gz -C out/re-bundled && metabench compare out/re-bundled/bundle/results/point-1 out/re/point-1 && metabench compare out/re-bundled/bundle/results/point-2 out/re/point-2',
  );
});

test('sh quotes what the shell would split or expand', () => {
  assert.equal(sh('a/b-c.tar.gz'), 'a/b-c.tar.gz');
  assert.equal(sh('my dir'), "'my dir'");
  assert.equal(sh("it's"), `'it'\\''s'`);
  assert.equal(sh('$HOME'), "'$HOME'");
});
