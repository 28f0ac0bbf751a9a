import { spawnSync } from 'node:child_process';
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

test('a long opening comment before the first key parses (the emptiness check is linear: the old pattern backtracked exponentially in the comment lines and never ended on 40)', () => {
  const comment = Array.from({ length: 40 }, (_, i) => `# line ${i} of what the file shows and why`).join(
    '\n',
  );
  // In a child process, so a check that never ends is killed (a hang guard, not a speed
  // bound: the old pattern needed about 8 s for 24 lines and doubled with each line more).
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { parseYamlFile } from ${JSON.stringify(new URL('./yamlFile.js', import.meta.url).href)};
       process.stdout.write(JSON.stringify(parseYamlFile(process.argv[1], 'x.yaml').data));`,
      `${comment}\nname: x # a key\n`,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(child.signal, null, 'the emptiness check did not end');
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), { name: 'x' });
});
