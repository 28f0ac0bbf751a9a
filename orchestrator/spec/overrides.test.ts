import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SpecError } from '../../foundation/errors.js';
import { parseExperiment } from './load.js';
import { applyOverrides, parsePath, parseSet, type Override } from '../../foundation/overrides.js';

const retryStorm = readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');

function set(...texts: string[]): Override[] {
  return texts.map((t) => {
    const r = parseSet(t);
    assert.ok(r.ok, t);
    return r.value;
  });
}

test('--set values are read as YAML: numbers, strings with units, mappings', () => {
  const [a, b, c] = set('client.retry.maxAttempts=2', 'load.rate=40/s', 'client.retry={ policy: none }');
  assert.deepEqual(a!.path, ['client', 'retry', 'maxAttempts']);
  assert.equal(a!.value, 2);
  assert.equal(b!.value, '40/s');
  assert.deepEqual(c!.value, { policy: 'none' });
  assert.equal(parseSet('load.rate').ok, false);
  assert.equal(parseSet('=3').ok, false);
  assert.equal(parsePath('a..b').ok, false);
  assert.equal(parsePath('load.mix.0.share').ok, true);
});

test('overrides change a copy, create missing mappings and replace array elements', () => {
  const data = { load: { mix: [{ name: 'a' }, { name: 'b' }] }, client: { timeout: '1s' } };
  const out = applyOverrides(data, set('load.mix.1.name=c', 'client.retry.policy=none', 'seed=7'));
  assert.deepEqual(out, {
    load: { mix: [{ name: 'a' }, { name: 'c' }] },
    client: { timeout: '1s', retry: { policy: 'none' } },
    seed: 7,
  });
  assert.equal(data.load.mix[1]!.name, 'b', 'the original is untouched');
});

test('an overridden experiment is validated like the file, and resolves the new values', () => {
  const e = parseExperiment(
    retryStorm,
    'retry-storm.yaml',
    set('load.rate=40/s', 'client.retry.policy=none', 'schedule.trigger.duration=2s'),
  );
  assert.deepEqual(e.load.rate, { perS: 40 });
  assert.equal(e.client.retry.policy, 'none');
  assert.equal(e.schedule.triggers[0]!.duration, 2000);

  let issues: SpecError['issues'] = [];
  try {
    parseExperiment(
      retryStorm,
      'retry-storm.yaml',
      set('load.rat=40/s', 'client.retry.maxAttempts=0', 'client.timeout=fast'),
    );
  } catch (err) {
    assert.ok(err instanceof SpecError);
    issues = err.issues;
  }
  const by = new Map(issues.map((i) => [i.path, i]));
  assert.equal(issues.length, 3);
  assert.match(by.get('load.rat')!.message, /did you mean "rate"\?.*--set load\.rat=40\/s/);
  assert.match(by.get('client.retry.maxAttempts')!.message, /at least 1 \(from --set/);
  assert.match(by.get('client.timeout')!.message, /not a duration.*from --set client\.timeout=fast/);
  // A value that came from the command line has no line in the file.
  assert.equal(by.get('client.timeout')!.line, undefined);
  assert.equal(by.get('client.timeout')!.file, 'retry-storm.yaml');
});

test('a problem the override causes in a field of the file points at the file, naming the override', () => {
  try {
    parseExperiment(retryStorm, 'retry-storm.yaml', set('load.phases=[{ duration: 1s, rate: 10/s }]'));
    assert.fail('expected two load shapes to be refused');
  } catch (err) {
    assert.ok(err instanceof SpecError);
    const i = err.issues.find((x) => x.path === 'load')!;
    assert.match(i.message, /give only one of rate, phases .*\(with --set load\.phases=/);
    assert.equal(i.line, 13); // the load mapping in the file
  }
});
