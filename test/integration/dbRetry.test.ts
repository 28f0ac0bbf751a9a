import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgresServer } from '../../orchestrator/lab/local/dataServices.js';
import { DbPool } from '../../services/api/dbPool.js';
import { ReadThrough, wallClock, type LookupEvents, type QueryResult } from '../../services/api/lookup.js';
import { pgDatabase } from '../../services/api/readThrough.js';
import { seededRng } from '../../foundation/rng.js';
import type { DurationDist } from '../../foundation/distributions.js';

// The api's client-side query policy (lab.db.timeout, lab.db.retry) on a real Postgres:
// an attempt unanswered within its timeout is abandoned, its connection discarded and
// replaced, and the query sent again on another connection, a bounded number of times.

function counted(): { events: LookupEvents; attempts: boolean[]; results: QueryResult[] } {
  const attempts: boolean[] = [];
  const results: QueryResult[] = [];
  const none = (): void => undefined;
  return {
    attempts,
    results,
    events: {
      cacheHit: none,
      cacheMiss: none,
      cacheError: none,
      cacheFillError: none,
      dbPoolWait: none,
      dbQueryTime: none,
      dbQuery: (r) => results.push(r),
      dbAttempt: (retry) => attempts.push(retry),
    },
  };
}

const noCache = {
  get: () => Promise.reject(new Error('not used: queryDb only')),
  fill: () => Promise.reject(new Error('not used: queryDb only')),
};

function lookup(pool: DbPool, delay: DurationDist, events: LookupEvents): ReadThrough<unknown> {
  return new ReadThrough(wallClock, noCache, pgDatabase(pool), delay, seededRng(1, 't'), events, {
    timeoutMs: 100,
    maxAttempts: 3,
  }) as ReadThrough<unknown>;
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a query attempt past its timeout is abandoned, its connection discarded and replaced, the query retried up to maxAttempts', async () => {
  const pg = new PostgresServer('127.0.0.1', { keys: 100, maxConnections: 20 }, () => undefined);
  await pg.start();
  const pool = new DbPool({
    host: '127.0.0.1',
    port: pg.port,
    user: pg.user,
    database: pg.database,
    size: 2,
    connectTimeoutMs: 1000,
  });
  try {
    await pool.open();
    // The pool's backends (their pids), seen from another connection.
    const backends = (): Promise<number[]> =>
      pg.withClient(async (c) => {
        const r = await c.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        );
        return r.rows.map((x) => x.pid);
      });
    const before = await backends();
    assert.equal(before.length, 2);

    // Every attempt sleeps 400 ms in Postgres: each is abandoned at 100 ms, three in all.
    const slow = counted();
    const got = await lookup(pool, { dist: 'constant', meanMs: 400 }, slow.events).queryDb(7, Infinity);
    assert.equal(got, 'timeout');
    assert.deepEqual(slow.attempts, [false, true, true], 'one first attempt, two retries');
    assert.deepEqual(slow.results, ['cancelled'], 'one query, counted once');

    // The discarded connections are replaced in the background: the pool is whole again,
    // and a fast query is answered with its own row, not an abandoned query's late reply.
    await until('the pool replaced its connections', () => pool.busy === 0);
    const fast = counted();
    const quick = lookup(pool, { dist: 'constant', meanMs: 1 }, fast.events);
    const expected = await pg.withClient(
      async (c) => (await c.query<{ value: string }>('SELECT value FROM items WHERE id = 8')).rows[0]!.value,
    );
    assert.deepEqual(await quick.queryDb(8, Infinity), { value: expected });
    assert.deepEqual(await quick.queryDb(8, Infinity), { value: expected });
    assert.deepEqual(fast.attempts, [false, false], 'answered at the first attempt');
    assert.deepEqual(fast.results, ['ok', 'ok']);
    // The abandoned connections are closed, not left open: once their sleep is over and
    // their reply finds no socket, Postgres has the pool's two backends only.
    let after = await backends();
    for (let i = 0; i < 50 && after.length !== 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await backends();
    }
    assert.equal(after.length, 2, `the three abandoned backends ended: ${after.join(', ')}`);
    // Both first connections carried an abandoned attempt: neither is left in the pool.
    assert.deepEqual(
      after.filter((pid) => before.includes(pid)),
      [],
      `before ${before.join(', ')}, after ${after.join(', ')}`,
    );
  } finally {
    await pool.close();
    await pg.stop();
  }
});
