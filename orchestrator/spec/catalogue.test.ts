import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseExperiment } from './load.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const experiments = readdirSync(join(ROOT, 'experiments')).filter(
  (f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'),
);
const table = readFileSync(join(ROOT, 'experiments/README.md'), 'utf8');
const repro = readdirSync(join(ROOT, 'test/repro'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(join(ROOT, 'test/repro', f), 'utf8'))
  .join('\n');

test('every experiment file is in the catalogue table, and every row names a file that exists', () => {
  const rows = [...table.matchAll(/^\| `([^`]+\.yaml)` \|/gm)].map((m) => m[1]!);
  assert.deepEqual([...rows].sort(), [...experiments].sort());
});

test('every catalogue experiment validates, opens with what it shows, and is run by the reproduction suite', () => {
  for (const f of experiments) {
    const text = readFileSync(join(ROOT, 'experiments', f), 'utf8');
    const e = parseExperiment(text, f);
    assert.equal(`${e.name}.yaml`, f, `${f}: its name is its file name`);
    const opening = text.slice(text.indexOf('\n') + 1, text.indexOf('\nname:'));
    assert.match(opening, new RegExp(`^# ${e.name}: `), `${f} opens with a comment on what it shows`);
    assert.match(
      opening,
      /recover|metastable|collapse|oscillat|degraded/i,
      `${f} says what outcome to expect`,
    );
    // Named in a test of test/repro, literally or through a name the suite builds.
    assert.ok(repro.includes(e.name), `${f} is run by the reproduction suite (test/repro)`);
  }
});
