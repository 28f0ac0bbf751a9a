import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpecError } from './errors.js';
import { parseYamlFile } from './yamlFile.js';

test('a file of comments and blank lines only is refused as empty, whatever its line endings', () => {
  for (const text of ['', '\n  \n', '# a\n\n  # b\n', '# a\r\n# b\r\n', '# a\n# b'])
    assert.throws(
      () => parseYamlFile(text, 'x.yaml'),
      (e: unknown) => e instanceof SpecError && /the file is empty/.test(e.message),
      JSON.stringify(text),
    );
});

test('a long opening comment before the first key parses at once (the emptiness check is linear; the old pattern took seconds on 24 lines)', () => {
  const comment = Array.from({ length: 24 }, (_, i) => `# line ${i} of what the file shows and why`).join(
    '\n',
  );
  const t0 = performance.now();
  const parsed = parseYamlFile(`${comment}\nname: x # a key\n`, 'x.yaml');
  assert.ok(performance.now() - t0 < 1000, `${performance.now() - t0} ms`);
  assert.deepEqual(parsed.data, { name: 'x' });
});
