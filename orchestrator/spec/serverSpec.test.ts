import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpecError } from '../../foundation/errors.js';
import { specIssues } from '../../test/helpers/specIssues.js';
import { labConfig } from '../lab/labConfig.js';
import { refuseOn, runtimePlugin } from '../lab/RuntimePlugin.js';
import { registerRuntimes } from '../cli/runtimes.js';
import { simRefusals } from '../../sim/refusals.js';
import { parseExperiment } from './load.js';

// lab.api.server (issue 34, point 4): a reference server plays the api. What it cannot do is
// refused where it is written, by file, line and field.

registerRuntimes();

/** An experiment whose lab.api is `api` (a flow mapping's fields), with `lab` appended under lab:. */
function yaml(api: string, lab = ''): string {
  return `name: s
lab:
  api: { ${api} }
${lab}load: { arrival: constant, rate: 50/s }
client: { timeout: 1s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 2s
  trigger: { kind: pause, target: api, duration: 2s }
  observe: 2s
recovery: { within: 5x, tolerance: 20%, window: 1s, hold: 1s }
`;
}

const POOL = 'workers: 8, work: { dist: constant, mean: 100ms }';

test('lab.api.server: absent fills nothing in (files resolve as before); builtin and each server are accepted', () => {
  const none = parseExperiment(yaml(POOL), 'none.yaml');
  assert.equal('server' in none.lab!.api, false);
  assert.equal(labConfig(none, 1).server, undefined);
  assert.equal(labConfig(parseExperiment(yaml(`server: builtin, ${POOL}`), 'b.yaml'), 1).server, undefined);
  for (const s of ['php-fpm', 'gunicorn'] as const)
    assert.deepEqual(labConfig(parseExperiment(yaml(`server: ${s}, ${POOL}`), 's.yaml'), 1).server, {
      kind: s,
    });
});

test('the jvm server needs lab.api.jvm; its heap, hold, churn and collector, and queueLimit as its bounded queue, reach the lab', () => {
  const issues = specIssues(yaml(`server: jvm, ${POOL}`), 'j.yaml');
  assert.equal(issues[0]!.path, 'lab.api.server');
  assert.equal(issues[0]!.line, 3);
  assert.match(issues[0]!.message, /needs lab\.api\.jvm/);
  const e = parseExperiment(
    yaml(`server: jvm, ${POOL}, queueLimit: 20, jvm: { heapMiB: 64, holdKiB: 256 }`),
    'j.yaml',
  );
  assert.deepEqual(labConfig(e, 1).server, {
    kind: 'jvm',
    jvm: { heapMb: 64, collector: 'serial', allocBytes: 256 * 1024, churnBytes: 0, queue: 20 },
  });
  const churn = parseExperiment(
    yaml(`server: jvm, ${POOL}, jvm: { heapMiB: 64, holdKiB: 24, churnKiB: 1024 }`),
    'c.yaml',
  );
  assert.equal(labConfig(churn, 1).server?.jvm?.churnBytes, 1024 * 1024);
  const negative = specIssues(
    yaml(`server: jvm, ${POOL}, jvm: { heapMiB: 64, holdKiB: 24, churnKiB: -1 }`),
    'n.yaml',
  );
  assert.equal(negative[0]!.path, 'lab.api.jvm.churnKiB');
  const j = specIssues(yaml(`server: php-fpm, ${POOL}, jvm: { heapMiB: 64, holdKiB: 256 }`), 'p.yaml');
  assert.equal(j[0]!.path, 'lab.api.jvm');
  assert.match(j[0]!.message, /only to server: jvm/);
  const tooBig = specIssues(yaml(`server: jvm, ${POOL}, jvm: { heapMiB: 16, holdKiB: 4096 }`), 'big.yaml');
  assert.equal(tooBig[0]!.path, 'lab.api.jvm.holdKiB');
  assert.match(tooBig[0]!.message, /exceeds the heap \(16 MiB\)/);
  const zero = specIssues(
    yaml(`server: jvm, ${POOL}, queueLimit: 0, jvm: { heapMiB: 64, holdKiB: 1 }`),
    'z.yaml',
  );
  assert.equal(zero[0]!.path, 'lab.api.queueLimit');
});

test('a reference server refuses what it cannot honour, each by field and line', () => {
  const cases: [string, string, string, RegExp][] = [
    [
      'server: gunicorn, workers: 8, work: { dist: exponential, mean: 100ms }',
      '',
      'lab.api.work.dist',
      /constant/,
    ],
    [`server: php-fpm, ${POOL}, queue: lifo`, '', 'lab.api.queue', /arrival order: fifo/],
    [`server: php-fpm, ${POOL}, queueLimit: 10`, '', 'lab.api.queueLimit', /only the jvm/],
    [
      `server: gunicorn, ${POOL}, errorCost: { dist: constant, mean: 10ms }`,
      '',
      'lab.api.errorCost',
      /error path/,
    ],
    [`server: php-fpm, ${POOL}, replicas: 2`, '', 'lab.api.replicas', /one instance/],
    [`server: php-fpm, ${POOL}, requestTimeout: 1s`, '', 'lab.api.requestTimeout', /request timeout/],
    [`server: php-fpm, ${POOL}, deadlineDrop: true`, '', 'lab.api.deadlineDrop', /deadline/],
    [`server: php-fpm, ${POOL}, shed: { policy: queue-time, limit: 1s }`, '', 'lab.api.shed', /shedding/],
    [`server: php-fpm, ${POOL}, concurrencyLimit: 9`, '', 'lab.api.concurrencyLimit', /concurrency/],
    [
      `server: gunicorn, ${POOL}`,
      '  cache: {}\n  db: { keys: 10, pool: 4, query: { dist: constant, mean: 5ms } }\n',
      'lab.cache',
      /needs server: builtin/,
    ],
  ];
  for (const [api, lab, path, message] of cases) {
    const issues = specIssues(yaml(api, lab), 'bad.yaml');
    const issue = issues.find((i) => i.path === path);
    assert.ok(issue, `${api}: ${JSON.stringify(issues)}`);
    assert.equal(issue.file, 'bad.yaml');
    assert.equal(typeof issue.line, 'number', `${path} has a line`);
    assert.match(issue.message, message);
  }
});

test("the Docker and swarm runtimes refuse a reference server in the api's place; local runs it", () => {
  const e = parseExperiment(yaml(`server: php-fpm, ${POOL}`), 'p.yaml');
  for (const name of ['docker', 'swarm'] as const)
    assert.throws(
      () => refuseOn(runtimePlugin(name), e, 'p.yaml'),
      (err: unknown) =>
        err instanceof SpecError &&
        err.issues[0]!.path === 'lab.api.server' &&
        /runs on the local runtime/.test(err.issues[0]!.message),
    );
  assert.doesNotThrow(() => refuseOn(runtimePlugin('local'), e, 'p.yaml'));
});

test('the simulation models php-fpm and gunicorn (each behind nginx) as a fixed FIFO pool and refuses the JVM (its heap), saying why', () => {
  assert.deepEqual(simRefusals(parseExperiment(yaml(`server: php-fpm, ${POOL}`), 'p.yaml')), []);
  assert.deepEqual(simRefusals(parseExperiment(yaml(`server: gunicorn, ${POOL}`), 'g.yaml')), []);
  const jvm = parseExperiment(yaml(`server: jvm, ${POOL}, jvm: { heapMiB: 64, holdKiB: 64 }`), 'j.yaml');
  const r = simRefusals(jvm);
  assert.equal(r[0]!.path, 'lab.api.server');
  assert.match(r[0]!.message, /garbage collector/);
});
