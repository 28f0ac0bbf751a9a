import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseExperiment } from './load.js';
import { planRun } from './plan.js';
import { brokenScaleLimits, smallestAcceptedScale } from './scaleLimits.js';

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

test("the catalogue's smallest-scale column is each file's smallest accepted scale (scaleLimits.ts), and every file is accepted at scale 1", () => {
  for (const f of experiments) {
    const file = join(ROOT, 'experiments', f);
    const plan = planRun(parseExperiment(readFileSync(file, 'utf8'), file), {
      scale: 1,
      run: 1,
      sourceFile: file,
    });
    const row = new RegExp(`^\\| \`${f.replace('.', '\\.')}\` \\|([^\\n]*)$`, 'm').exec(table);
    assert.ok(row, f);
    const cells = row[1]!.split(' | ').map((c) => c.trim().replace(/\|$/, '').trim());
    assert.equal(
      cells[cells.length - 1],
      String(smallestAcceptedScale(plan)),
      `${f}: the smallest scale column`,
    );
    assert.deepEqual(brokenScaleLimits(plan), [], `${f} is accepted at scale 1`);
  }
});

test("the README's quick look runs retry-storm at its smallest accepted scale", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const file = join(ROOT, 'experiments/retry-storm.yaml');
  const plan = planRun(parseExperiment(readFileSync(file, 'utf8'), file), { scale: 1, run: 1 });
  assert.match(
    readme,
    new RegExp(`npx metabench run experiments/retry-storm\\.yaml --scale ${smallestAcceptedScale(plan)} `),
  );
});
