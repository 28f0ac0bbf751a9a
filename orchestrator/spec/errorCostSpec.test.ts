import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseExperiment } from './load.js';
import { labConfig } from '../lab/labConfig.js';
import { nominalCapacityPerS } from './plan.js';
import { apiFlags, parseErrorCost } from '../../services/api/config.js';
import { specIssues } from '../../test/helpers/specIssues.js';

const retryStorm = readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');

/** retry-storm.yaml with `errorCost` (flow YAML) in its lab.api, on line 11. */
const withErrorCost = (errorCost: string): string =>
  retryStorm.replace('queue: fifo }', `queue: fifo, errorCost: ${errorCost} }`);

test('lab.api.errorCost reaches the api as flags that parse back, and leaves nominal capacity alone', () => {
  const e = parseExperiment(withErrorCost('{ dist: exponential, mean: 60ms }'), 'x.yaml');
  const cfg = labConfig(e, 1);
  assert.deepEqual(cfg.errorCost, { work: { dist: 'exponential', meanMs: 60 } });
  const flags = apiFlags(cfg);
  const i = flags.indexOf('--error-cost');
  assert.equal(flags[i + 1], 'exponential:60ms');
  assert.ok(!flags.includes('--error-cost-on-shed'), 'onShed is off by default');
  assert.deepEqual(parseErrorCost({ 'error-cost': flags[i + 1] }), cfg.errorCost);
  // Nominal capacity is c / S whatever the errors cost: 8 / 20 ms.
  assert.equal(nominalCapacityPerS(e), 400);

  const onShed = labConfig(
    parseExperiment(withErrorCost('{ dist: lognormal, mean: 50ms, sigma: 0.5, onShed: true }'), 'x.yaml'),
    1,
  );
  assert.deepEqual(onShed.errorCost, { work: { dist: 'lognormal', meanMs: 50, sigma: 0.5 }, onShed: true });
  const f = apiFlags(onShed);
  assert.deepEqual(f.slice(f.indexOf('--error-cost')), [
    '--error-cost',
    'lognormal:50ms:0.5',
    '--error-cost-on-shed',
  ]);
  assert.deepEqual(
    parseErrorCost({ 'error-cost': 'lognormal:50ms:0.5', 'error-cost-on-shed': true }),
    onShed.errorCost,
  );
  assert.equal(labConfig(parseExperiment(retryStorm, 'x.yaml'), 1).errorCost, undefined);
});

test('a bad lab.api.errorCost is refused with its file, line and field', () => {
  const negative = specIssues(withErrorCost('{ dist: exponential, mean: -30ms }'), 'error-path.yaml');
  const mean = negative.find((i) => i.path === 'lab.api.errorCost.mean');
  assert.ok(mean, JSON.stringify(negative));
  assert.equal(mean.file, 'error-path.yaml');
  assert.equal(mean.line, 11);
  assert.match(mean.message, /duration/);

  const sigma = specIssues(withErrorCost('{ dist: lognormal, mean: 30ms }'));
  assert.match(sigma.find((i) => i.path === 'lab.api.errorCost.sigma')!.message, /needs sigma/);

  const shed = specIssues(withErrorCost('{ dist: constant, mean: 30ms, onShed: yes please }'));
  assert.ok(
    shed.some((i) => i.path === 'lab.api.errorCost.onShed'),
    JSON.stringify(shed),
  );

  const typo = specIssues(withErrorCost('{ dist: constant, mean: 30ms, onShedd: true }'));
  assert.match(typo.find((i) => i.path === 'lab.api.errorCost.onShedd')!.message, /did you mean "onShed"/);

  assert.throws(() => parseErrorCost({ 'error-cost-on-shed': true }), /needs --error-cost/);
  assert.throws(() => parseErrorCost({ 'error-cost': 'exponential:-3ms' }), /--error-cost: mean must be/);
});
