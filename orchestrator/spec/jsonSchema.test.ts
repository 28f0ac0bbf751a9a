import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../../test/helpers/cli.js';
import { jsonSchemaOf, jsonSchemaText } from './jsonSchema.js';
import { UNIT_PATTERNS } from '../../foundation/units.js';

test('the committed JSON Schemas are up to date (npm run schema regenerates them)', () => {
  for (const kind of ['experiment', 'sweep'] as const)
    assert.equal(
      readFileSync(join(REPO, 'schema', `${kind}.schema.json`), 'utf8'),
      jsonSchemaText(kind),
      `schema/${kind}.schema.json is stale: run npm run schema`,
    );
});

test('every experiment file names its schema on its first line, for editors', () => {
  for (const f of readdirSync(join(REPO, 'experiments')).filter((x) => x.endsWith('.yaml'))) {
    const first = readFileSync(join(REPO, 'experiments', f), 'utf8').split('\n')[0];
    const kind = f.endsWith('.sweep.yaml') ? 'sweep' : 'experiment';
    assert.equal(first, `# yaml-language-server: $schema=../schema/${kind}.schema.json`, f);
  }
});

test('the schema is strict and unit fields carry the pattern the parser accepts', () => {
  const s = jsonSchemaOf('experiment') as {
    additionalProperties: boolean;
    required: string[];
    properties: Record<string, { properties?: Record<string, { pattern?: string; description?: string }> }>;
  };
  assert.equal(s.additionalProperties, false);
  assert.deepEqual([...s.required].sort(), ['client', 'load', 'name', 'recovery', 'schedule']);
  // The system under test: exactly one of the built-in lab and your own.
  assert.deepEqual((s as unknown as { oneOf: unknown }).oneOf, [
    { required: ['lab'] },
    { required: ['system'] },
  ]);
  const timeout = s.properties['client']!.properties!['timeout']!;
  assert.equal(timeout.pattern, UNIT_PATTERNS.duration);
  assert.match(timeout.description!, /500ms/);
  const re = new RegExp(UNIT_PATTERNS.rate);
  assert.ok(re.test('280/s') && re.test('70% capacity') && !re.test('fast'));
  assert.ok(
    new RegExp(UNIT_PATTERNS.duration).test('1.5m') && !new RegExp(UNIT_PATTERNS.duration).test('500'),
  );
});
