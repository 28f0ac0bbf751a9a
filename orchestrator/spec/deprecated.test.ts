import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpecError, type SpecIssue } from '../../foundation/errors.js';
import { parseExperiment } from './load.js';

// load.mix[].thresholds (deprecated) is read into hypothesis.classes, the one home of
// per-class thresholds, with a warning naming file, line and field and the new spelling.

const platform = readFileSync(new URL('../../../experiments/llm-platform.yaml', import.meta.url), 'utf8');

/** llm-platform.yaml with its chat and agent classes' thresholds written the old way. */
function oldSpelling(extraClasses = ''): string {
  const t = platform
    .replace(
      /cancel: \{ share: 20%, afterTokens: 20 \}\n/,
      (m) => `${m}      thresholds: { ttftP95: 1500ms, errorRatio: 1% }\n`,
    )
    .replace(
      /path: \/agent\?steps=2&prompt=400\n/,
      (m) => `${m}      thresholds: { p95: 5s, errorRatio: 0.5% }\n`,
    )
    .replace(/\n {4}chat_stream: .*\n/, '\n')
    .replace(/\n {4}agent_run: .*\n/, '\n');
  assert.notEqual(t, platform);
  return t.replace(/\n {2}classes: #.*\n/, `\n  classes:\n${extraClasses}`);
}

function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((l) => l.includes(needle)) + 1;
}

test('load.mix[].thresholds are read into hypothesis.classes as "<=" thresholds, with a warning at file:line:field', () => {
  const text = oldSpelling();
  const warnings: SpecIssue[] = [];
  const e = parseExperiment(text, 'old.yaml', [], (w) => warnings.push(w));
  const c = e.hypothesis.classes!;
  assert.deepEqual(c['chat_stream'], { ttftP95: '<= 1500ms', errorRatio: '<= 1%' });
  assert.deepEqual(c['agent_run'], { p95: '<= 5s', errorRatio: '<= 0.5%' });
  // The classes written the new way stay as they were.
  assert.deepEqual(c['api_read'], { p95: '<= 300ms', errorRatio: '<= 0.1%' });
  // The old field is gone from what the rest of the program reads.
  assert.ok(e.load.mix!.every((k) => k.thresholds === undefined));
  assert.deepEqual(
    warnings.map((w) => [w.file, w.line, w.path]),
    [
      ['old.yaml', lineOf(text, 'thresholds: { ttftP95'), 'load.mix.1.thresholds'],
      ['old.yaml', lineOf(text, 'thresholds: { p95: 5s'), 'load.mix.2.thresholds'],
    ],
  );
  assert.match(warnings[0]!.message, /^deprecated: /);
  assert.match(
    warnings[0]!.message,
    /write instead hypothesis\.classes\.chat_stream: \{ errorRatio: '<= 1%', ttftP95: '<= 1500ms' \}$/,
  );
  assert.match(
    warnings[1]!.message,
    /hypothesis\.classes\.agent_run: \{ p95: '<= 5s', errorRatio: '<= 0\.5%' \}/,
  );
  // The translated file means what the new spelling means.
  const migrated = parseExperiment(platform, 'new.yaml', [], () => assert.fail('no warning expected'));
  assert.deepEqual(
    { ...e.hypothesis.classes, agent_run: undefined },
    { ...migrated.hypothesis.classes, agent_run: undefined },
  );
});

test('the same metric of the same class in both spellings is an error naming both places', () => {
  const text = oldSpelling("    chat_stream: { ttftP95: '<= 2s' }\n    agent_run: { p99: '<= 9s' }\n");
  let issues: readonly SpecIssue[] = [];
  try {
    parseExperiment(text, 'both.yaml', [], () => undefined);
    assert.fail('expected a SpecError');
  } catch (err) {
    assert.ok(err instanceof SpecError);
    issues = err.issues;
  }
  assert.equal(issues.length, 1, issues.map((i) => i.message).join('\n'));
  const i = issues[0]!;
  assert.equal(i.path, 'hypothesis.classes.chat_stream.ttftP95');
  assert.equal(i.line, lineOf(text, "chat_stream: { ttftP95: '<= 2s' }"));
  assert.match(
    i.message,
    new RegExp(
      `at load\\.mix\\.1\\.thresholds\\.ttftP95 \\(both\\.yaml:${lineOf(text, 'thresholds: { ttftP95')}:\\d+\\)`,
    ),
  );
  // A different metric of the same class (agent_run p99 and the old p95) is no conflict.
  const ok = parseExperiment(
    oldSpelling("    agent_run: { p99: '<= 9s' }\n"),
    'ok.yaml',
    [],
    () => undefined,
  );
  assert.deepEqual(ok.hypothesis.classes!['agent_run'], {
    p99: '<= 9s',
    p95: '<= 5s',
    errorRatio: '<= 0.5%',
  });
});

test('metabench validate shows the deprecation on stderr and still says ok', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'class-thresholds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'old.yaml');
  writeFileSync(file, oldSpelling());
  const main = new URL('../cli/main.js', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [main, 'validate', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${file}: ok\n`);
  const line = lineOf(oldSpelling(), 'thresholds: { ttftP95');
  assert.match(
    r.stderr,
    new RegExp(
      `^metabench: warning: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${line}:\\d+: load\\.mix\\.1\\.thresholds: deprecated: .*hypothesis\\.classes\\.chat_stream: \\{ errorRatio: '<= 1%', ttftP95: '<= 1500ms' \\}$`,
      'm',
    ),
  );
  // Once per field, not once per parse.
  assert.equal(r.stderr.split('\n').filter((l) => l.includes('load.mix.2.thresholds')).length, 1);
});
