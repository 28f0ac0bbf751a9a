import { test } from 'node:test';
import assert from 'node:assert/strict';
import { specIssues } from '../../test/helpers/specIssues.js';
import { labExperiment } from '../../test/helpers/labYaml.js';
import { apiReplicas } from '../run/client.js';
import { createTrigger } from '../trigger/registry.js';
import { parseExperiment } from './load.js';
import { nominalCapacityPerS, planCapacity } from './plan.js';
import { labIdentity } from '../calibrate/store.js';

const yaml = labExperiment;

test('lab.api.replicas: absent is one api and fills nothing in; N multiplies the nominal capacity', () => {
  const one = parseExperiment(yaml(''), 'one.yaml');
  assert.equal(
    one.lab!.api.replicas,
    undefined,
    'no default written into the experiment (manifests, lab keys)',
  );
  assert.equal('replicas' in one.lab!.api, false);
  assert.equal(apiReplicas(one), 1);
  assert.equal(nominalCapacityPerS(one), 400);
  const three = parseExperiment(yaml('replicas: 3, '), 'three.yaml');
  assert.equal(apiReplicas(three), 3);
  assert.equal(nominalCapacityPerS(three), 1200);
  assert.match(planCapacity(three, null).from, /^nominal: 3 replicas × 4 workers \/ 10 ms mean work/);
  assert.match(planCapacity(one, null).from, /^nominal: 4 workers \/ 10 ms/);
  // A calibration of one api is not one of three.
  assert.notDeepEqual(labIdentity(one, 'local'), labIdentity(three, 'local'));
});

test('lab.api.replicas is an integer from 1 to 16', () => {
  for (const bad of ['0', '17', '1.5', 'two']) {
    const issues = specIssues(yaml(`replicas: ${bad}, `), 'bad.yaml');
    assert.equal(issues[0]!.path, 'lab.api.replicas', bad);
    assert.equal(issues[0]!.file, 'bad.yaml');
  }
});

test('target: api[i] names one replica the lab runs; out of range, or on a component without replicas, is refused by field', () => {
  const ok = parseExperiment(yaml('replicas: 2, ', 'kind: pause, target: api[1], duration: 2s'), 'ok.yaml');
  const spec = ok.schedule.triggers[0]!;
  assert.equal('target' in spec && spec.target, 'api[1]');
  assert.equal(createTrigger(spec).target, 'api[1]');
  assert.equal(createTrigger(spec).describe(), 'pause api[1]');
  for (const kind of ['kill', 'stop'])
    parseExperiment(yaml('replicas: 2, ', `kind: ${kind}, target: api[0], duration: 2s`), 'ok.yaml');

  const past = specIssues(yaml('replicas: 2, ', 'kind: kill, target: api[2], duration: 2s'), 'past.yaml');
  assert.equal(past.length, 1);
  assert.equal(past[0]!.file, 'past.yaml');
  assert.equal(past[0]!.path, 'schedule.trigger.target');
  assert.match(
    past[0]!.message,
    /api\[2\] names replica 2, but the lab runs 2 api replicas, api\[0\] to api\[1\]/,
  );

  const single = specIssues(yaml('', 'kind: stop, target: api[1], duration: 2s'));
  assert.equal(single[0]!.path, 'schedule.trigger.target');
  assert.match(single[0]!.message, /the lab runs one api \(lab\.api\.replicas is 1 or absent\)/);
  // api[0] of a lab of one is that api.
  parseExperiment(yaml('', 'kind: pause, target: api[0], duration: 2s'), 'zero.yaml');

  const redis = specIssues(yaml('replicas: 2, ', 'kind: pause, target: redis[0], duration: 2s'));
  assert.equal(redis[0]!.path, 'schedule.trigger.target');
  assert.match(redis[0]!.message, /redis has no replicas/);

  const typo = specIssues(yaml('replicas: 2, ', 'kind: pause, target: api1, duration: 2s'));
  assert.equal(typo[0]!.path, 'schedule.trigger.target');
  assert.match(typo[0]!.message, /"api1" is not a target/);
});
