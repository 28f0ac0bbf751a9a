import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// CITATION.cff is what a thesis cites: it must stay valid CFF 1.2.0 and name the version released.
const REPO = fileURLToPath(new URL('../../', import.meta.url));

test('CITATION.cff has the keys CFF 1.2.0 requires, and package.json’s version and license', () => {
  const cff = parse(readFileSync(join(REPO, 'CITATION.cff'), 'utf8')) as Record<string, unknown>;
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
  };
  for (const key of ['cff-version', 'message', 'title', 'authors'])
    assert.ok(cff[key] !== undefined, `CITATION.cff lacks ${key}`);
  assert.equal(cff['cff-version'], '1.2.0');
  assert.equal(cff.title, 'metabench');
  assert.equal(cff.type, 'software');
  assert.ok(typeof cff.message === 'string' && cff.message.length > 0);
  const authors = cff.authors as { name?: string; 'family-names'?: string }[];
  assert.ok(Array.isArray(authors) && authors.length > 0, 'authors is a non-empty list');
  // Each author is a person (family-names) or an entity (name), as CFF requires.
  for (const a of authors) assert.ok(a.name ?? a['family-names'], 'an author without a name');
  assert.equal(cff.version, pkg.version);
  assert.equal(cff.license, pkg.license);
  assert.equal(typeof cff.version, 'string', 'version is a string (0.10 must not read as 0.1)');
});

test('the README’s Cite line points at CITATION.cff', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  assert.match(readme, /^Cite: \[CITATION\.cff\]\(CITATION\.cff\)/m);
});
