import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadResults } from './load.js';
import { renderMarkdown } from './markdown.js';
import { reportFigures } from './writeReport.js';

/**
 * Golden files: report.md rendered from recorded results folders (test/fixtures/results)
 * must equal test/fixtures/golden/<name>.report.md. Set UPDATE_GOLDEN=1 to rewrite them.
 */
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
const names = readdirSync(`${FIXTURES}results`);

test('there are recorded fixtures to check', () => assert.ok(names.length > 0));

for (const name of names)
  test(`report.md of the recorded run ${name} matches its golden file`, () => {
    const data = loadResults(`${FIXTURES}results/${name}`);
    const md = renderMarkdown(data, reportFigures(data));
    const golden = `${FIXTURES}golden/${name}.report.md`;
    if (process.env.UPDATE_GOLDEN === '1') {
      mkdirSync(`${FIXTURES}golden`, { recursive: true });
      writeFileSync(golden, md);
    }
    assert.ok(
      existsSync(golden),
      `${golden} is missing: run the unit tests with UPDATE_GOLDEN=1 to create it`,
    );
    assert.equal(md, readFileSync(golden, 'utf8'));
  });
