import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpecError } from '../../../foundation/errors.js';
import { parseExperiment } from '../../spec/load.js';
import { refuseDockerReplicas, refuseOnDocker } from '../engine/refuse.js';
import { refuseOn, runtimePlugin, type RuntimePlugin } from '../RuntimePlugin.js';
import { registerRuntimes } from '../../cli/runtimes.js';
import { dockerRuntime } from './runtime.js';

const experiment = (api: string): string => `name: d
lab:
  api: { ${api}workers: 4, work: { dist: constant, mean: 10ms } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: 'api[1]', duration: 2s }, observe: 2s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;

test('the docker runtime runs api replicas: it refuses only those whose ports would pass 65535', () => {
  assert.equal(dockerRuntime.refuse, refuseOnDocker);
  const three = parseExperiment(experiment('replicas: 3, '), 'three.yaml');
  refuseDockerReplicas(three, 'three.yaml', {});
  refuseDockerReplicas(three, 'three.yaml', { METABENCH_API_PORT: '65533' });
  assert.throws(
    () => refuseDockerReplicas(three, 'three.yaml', { METABENCH_API_PORT: '65534' }),
    (err: unknown) => {
      assert.ok(err instanceof SpecError);
      assert.equal(err.issues.length, 1);
      assert.equal(err.issues[0]!.file, 'three.yaml');
      assert.equal(err.issues[0]!.path, 'lab.api.replicas');
      assert.match(
        err.issues[0]!.message,
        /the Docker lab cannot run them: 3 api replicas publish ports 65534 to 65536 .*set METABENCH_API_PORT to 65533 or lower/,
      );
      return true;
    },
  );
  // One api publishes one port: any port the environment gives is its own business.
  refuseDockerReplicas(parseExperiment(experiment('').replace("'api[1]'", 'api'), 'one.yaml'), 'one.yaml', {
    METABENCH_API_PORT: '65535',
  });
});

test('the docker runtime refuses replicas whose pools overflow the compose file’s Postgres, naming the numbers', () => {
  const withDb = (n: number, pool: number): string =>
    experiment(`replicas: ${n}, `).replace(
      'lab:\n',
      `lab:\n  cache: { ttl: 60s, prewarm: true }\n  db: { keys: 100, pool: ${pool}, query: { dist: constant, mean: 1ms } }\n`,
    );
  refuseDockerReplicas(parseExperiment(withDb(12, 8), 'ok.yaml'), 'ok.yaml', {});
  assert.throws(
    () => refuseDockerReplicas(parseExperiment(withDb(13, 8), 'many.yaml'), 'many.yaml', {}),
    (err: unknown) => {
      assert.ok(err instanceof SpecError);
      assert.deepEqual(
        err.issues.map((i) => [i.file, i.path]),
        [['many.yaml', 'lab.api.replicas']],
      );
      assert.match(
        err.issues[0]!.message,
        /13 api replicas with lab.db.pool 8 open 104 connections, more than the 97/,
      );
      return true;
    },
  );
});

test('a runtime without the clients’ link to the api refuses it (link api, lab.api.link: true) before the run, by field, as its capabilities say; docker, local, sim and swarm run it', () => {
  registerRuntimes();
  const onLink = parseExperiment(
    experiment('replicas: 2, ').replace(
      "trigger: { kind: pause, target: 'api[1]', duration: 2s }",
      "triggers: [{ kind: pause, target: api, duration: 1s }, { kind: latency, link: 'api[1]', latency: 50ms, duration: 2s }]",
    ),
    'link.yaml',
  );
  const always = parseExperiment(experiment('replicas: 2, link: true, '), 'always.yaml');
  // No built-in runtime lacks the link any more: the swarm plugin as it would be, declaring it does not.
  const swarm = runtimePlugin('swarm');
  const without: RuntimePlugin = { ...swarm, capabilities: { ...swarm.capabilities, apiLink: false } };
  for (const [e, file, path] of [
    [onLink, 'link.yaml', 'schedule.triggers.1.link'],
    [always, 'always.yaml', 'lab.api.link'],
  ] as const)
    assert.throws(
      () => refuseOn(without, e, file),
      (err: unknown) => {
        assert.ok(err instanceof SpecError);
        assert.deepEqual(
          err.issues.map((i) => [i.file, i.path]),
          [[file, path]],
        );
        assert.match(
          err.issues[0]!.message,
          /the swarm runtime does not run the clients' link to the api .*: run it on the local, docker or swarm runtime/,
        );
        return true;
      },
    );
  // A run that names no api link is not refused for it; every built-in runtime runs it.
  refuseOn(without, parseExperiment(experiment('replicas: 2, '), 'plain.yaml'), 'plain.yaml');
  for (const runtime of ['docker', 'local', 'sim', 'swarm'] as const) {
    assert.equal(runtimePlugin(runtime).capabilities.apiLink, true, runtime);
    refuseOn(runtimePlugin(runtime), onLink, 'link.yaml');
    refuseOn(runtimePlugin(runtime), always, 'always.yaml');
  }
});
