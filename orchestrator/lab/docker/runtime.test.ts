import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpecError } from '../../../foundation/errors.js';
import { parseExperiment } from '../../spec/load.js';
import { dockerRuntime } from './runtime.js';

const experiment = (api: string): string => `name: d
lab:
  api: { ${api}workers: 4, work: { dist: constant, mean: 10ms } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 2s }, observe: 2s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;

test('the docker runtime refuses api replicas before anything runs, naming the file and lab.api.replicas', () => {
  const refuse = dockerRuntime.refuse;
  assert.ok(refuse, 'the docker plugin refuses what it cannot run');
  const e = parseExperiment(experiment('replicas: 3, '), 'three.yaml');
  assert.throws(
    () => refuse(e, 'three.yaml'),
    (err: unknown) => {
      assert.ok(err instanceof SpecError);
      assert.equal(err.issues.length, 1);
      assert.equal(err.issues[0]!.file, 'three.yaml');
      assert.equal(err.issues[0]!.path, 'lab.api.replicas');
      assert.match(
        err.issues[0]!.message,
        /the Docker lab runs one api replica for now \(this file asks for 3\)/,
      );
      return true;
    },
  );
  // One api, written or not, runs as before.
  refuse(parseExperiment(experiment(''), 'one.yaml'), 'one.yaml');
  refuse(parseExperiment(experiment('replicas: 1, '), 'one.yaml'), 'one.yaml');
});
