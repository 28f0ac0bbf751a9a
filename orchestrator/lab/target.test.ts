import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTarget, parseTarget, replicaIndices, replicaOutOfRange, targetOf } from './target.js';

test('a target is a component or one api replica: parsed, formatted back, resolved to replica indices', () => {
  assert.deepEqual(parseTarget('api'), { component: 'api' });
  assert.deepEqual(parseTarget('redis'), { component: 'redis' });
  assert.deepEqual(parseTarget('api[0]'), { component: 'api', replica: 0 });
  assert.deepEqual(parseTarget('api[12]'), { component: 'api', replica: 12 });
  for (const s of ['api', 'api[3]', 'postgres', 'llm']) assert.equal(formatTarget(targetOf(s as never)), s);
  // `api` is every replica; `api[i]` is that one.
  assert.deepEqual(replicaIndices({ component: 'api' }, 3), [0, 1, 2]);
  assert.deepEqual(replicaIndices({ component: 'api', replica: 2 }, 3), [2]);
  assert.deepEqual(replicaIndices({ component: 'api' }, 1), [0]);
  assert.throws(() => replicaIndices({ component: 'api', replica: 3 }, 3), /api\[0\] to api\[2\]/);
});

test('what is not a target says why: an unknown name, a malformed index, an index on a component without replicas', () => {
  const why = (s: string): string => {
    const t = parseTarget(s);
    assert.ok('error' in t, `${s} is refused`);
    return t.error;
  };
  assert.match(
    why('mainframe'),
    /"mainframe" is not a target: use one of api, redis, postgres, llm, or api\[i\]/,
  );
  assert.match(why('api[01]'), /not a target/);
  assert.match(why('api[-1]'), /not a target/);
  assert.match(why('api[]'), /not a target/);
  assert.match(why('API'), /not a target/);
  assert.match(why('redis[0]'), /redis has no replicas: only the api runs several .*write target: redis/);
  assert.match(why('postgres[1]'), /postgres has no replicas/);
  assert.throws(() => targetOf('llm[0]' as never), RangeError);
});

test('a replica index must be below the lab’s replica count, and the reason names the range', () => {
  assert.equal(replicaOutOfRange({ component: 'api' }, 1), undefined);
  assert.equal(replicaOutOfRange({ component: 'api', replica: 1 }, 2), undefined);
  assert.match(
    replicaOutOfRange({ component: 'api', replica: 2 }, 2)!,
    /runs 2 api replicas, api\[0\] to api\[1\]/,
  );
  assert.match(replicaOutOfRange({ component: 'api', replica: 1 }, 1)!, /runs one api .*lab\.api\.replicas/);
  assert.equal(replicaOutOfRange({ component: 'api', replica: 0 }, 1), undefined, 'api[0] is the one api');
});
