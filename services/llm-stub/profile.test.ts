import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpecError } from '../../foundation/errors.js';
import { DEFAULT_PROFILE, loadProfile } from './profile.js';

test('the shipped profile loads and says it is synthetic, when and from what', () => {
  const p = loadProfile(DEFAULT_PROFILE);
  assert.equal(p.version, 1);
  assert.equal(p.collected.method, 'synthetic');
  assert.match(p.collected.date, /^\d{4}-\d{2}-\d{2}$/);
  assert.match(p.collected.source, /llm-stub\.md/);
  assert.equal(p.ttft.floor, 250);
  assert.equal(p.tail.fraction, 0.02);
  assert.equal(p.tail.ttftFactor, 6);
});

function errorsOf(text: string): SpecError {
  const file = join(mkdtempSync(join(tmpdir(), 'profile-')), 'bad.yaml');
  writeFileSync(file, text);
  try {
    loadProfile(file);
  } catch (err) {
    assert.ok(err instanceof SpecError);
    for (const i of err.issues) assert.equal(i.file, file);
    return err;
  }
  assert.fail('the profile was accepted');
}

test('a bad profile is refused with the file, line and field of every problem', () => {
  const good = readFileSync(DEFAULT_PROFILE, 'utf8');
  const bad = good
    .replace('fraction: 2%', 'fraction: 200%')
    .replace('floor: 250ms', 'floor: 250')
    .replace('contextWindow: 128000', 'contextWindow: 128000\ncontextWindw: 1');
  const e = errorsOf(bad);
  const byPath = new Map(e.issues.map((i) => [i.path, i]));
  assert.match(byPath.get('tail.fraction')?.message ?? '', /between 0% and 100%/);
  assert.match(byPath.get('ttft.floor')?.message ?? '', /duration/);
  assert.match(byPath.get('contextWindw')?.message ?? '', /did you mean "contextWindow"/);
  const line = bad.split('\n').findIndex((l) => l.includes('fraction: 200%')) + 1;
  assert.equal(byPath.get('tail.fraction')?.line, line);
  assert.match(e.message, /bad\.yaml:\d+:\d+: tail\.fraction:/);
});

test('a missing field and a wrong version are named', () => {
  const e = errorsOf('version: 2\nname: x\n');
  const paths = e.issues.map((i) => i.path);
  assert.ok(paths.includes('version'));
  assert.ok(paths.includes('ttft'));
  assert.match(e.issues.find((i) => i.path === 'ttft')!.message, /is required/);
});
