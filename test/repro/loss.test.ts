import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';
import { assertLossAmplification, lossProbability, lossWindows, perS, type Window } from '../helpers/loss.js';

// The reproduction suite, message loss (issue 35, point 5): the catalogue's loss rows on
// the local lab, asserting what each row claims (experiments/README.md) and the retries
// the loss causes, with bounds derived from the file's loss probability, not from a run.

describe('reproduction suite: message loss', () => {
  test('llm-loss recovers; while the provider link loses requests the api sends 1 + p + p² attempts per call and the provider receives about one', async () => {
    const p = lossProbability('llm-loss');
    const { s, rows } = await runScaled('experiments/llm-loss.yaml');
    assertClaimed('llm-loss', s);
    const timeoutS = 10; // lab.llm.timeout: a lost attempt is retried when it times out
    // The loss in its steady state: from one timeout (and a second for the backoff) after it
    // began, to its end (when the stalled connections are closed and retried at once).
    const { base, loss, after } = lossWindows(s, rows, timeoutS + 1, timeoutS + 1);
    assert.ok(loss[1] - loss[0] >= 30 && after[1] - after[0] >= 30, `loss ${loss}, after ${after}`);
    const figures = (w: Window): string =>
      `goodput ${perS(rows, 'goodput', w).toFixed(2)}/s, ${perS(rows, 'llm_calls', w).toFixed(2)} calls/s, ` +
      `${perS(rows, 'llm_attempts', w).toFixed(2)} attempts/s, provider ${perS(rows, 'llm_provider_requests', w).toFixed(2)} requests/s`;
    const msg = `p ${p}; baseline: ${figures(base)}; loss: ${figures(loss)}; after: ${figures(after)}`;

    // Healthy link: about one attempt per call.
    assert.ok(perS(rows, 'llm_attempts', base) / perS(rows, 'llm_calls', base) < 1.05, msg);

    // The loss: each attempt lost with p is retried (3 attempts at most), so a call costs
    // 1 + p + p² attempts.
    const calls = sum(rows, 'llm_calls', ...loss);
    const attempts = sum(rows, 'llm_attempts', ...loss);
    assert.ok(calls > 200, msg);
    assertLossAmplification(rows, loss, p, 3, { origins: 'llm_calls', attempts: 'llm_attempts' }, msg);
    assert.ok(Math.max(...rows.map((r) => Number(r['amplification_llm'] ?? 0))) > 1 + p / 2, msg);
    // The lost requests never reach the provider: it receives (1 - p)(1 + p + p²) = 1 - p³
    // requests per call, the share of the attempts sent that arrive is 1 - p.
    const received = sum(rows, 'llm_provider_requests', ...loss);
    const lostShare = 1 - received / attempts;
    const noise = (3 * Math.sqrt(attempts - received)) / attempts;
    assert.ok(
      lostShare > p - noise && lostShare < p + noise,
      `${(lostShare * 100).toFixed(1)}% of the attempts never reached the provider; ${msg}`,
    );
    // Goodput dips by the few origins whose lost attempts outlast the client's 20 s timeout.
    const baseGoodput = perS(rows, 'goodput', base);
    assert.ok(perS(rows, 'goodput', loss) > 0.8 * baseGoodput, msg);

    // After it: one attempt per call again, every one arriving.
    const afterCalls = sum(rows, 'llm_calls', ...after);
    assert.ok(sum(rows, 'llm_attempts', ...after) / afterCalls < 1.05, msg);
    assert.ok(sum(rows, 'llm_provider_requests', ...after) / afterCalls > 0.9, msg);
    assert.ok(perS(rows, 'goodput', after) >= 0.85 * baseGoodput, msg);
  });

  test("retry-storm-loss recovers; while the clients' link loses replies the client sends 1 + p + p² + p³ attempts per origin", async (tc) => {
    const p = lossProbability('retry-storm-loss');
    const { s, rows } = await runScaled('experiments/retry-storm-loss.yaml');
    assertClaimed('retry-storm-loss', s);
    const t = s.trigger!;
    const base: Window = [Math.ceil(t.startS) - Math.floor(s.baseline.seconds), Math.floor(t.startS)];
    // The client's timeout is 500 ms: a second after the loss begins its retries are steady.
    const loss: Window = [Math.ceil(t.startS) + 1, Math.floor(t.endS)];
    const after: Window = [Math.ceil(t.endS) + 1, Math.floor(t.endS) + 1 + (loss[1] - loss[0])];
    const figures = (w: Window): string =>
      `goodput ${perS(rows, 'goodput', w).toFixed(1)}/s, offered ${perS(rows, 'offered', w).toFixed(1)}/s, ` +
      `attempts ${perS(rows, 'attempts', w).toFixed(1)}/s, api received ${perS(rows, 'server_received', w).toFixed(1)}/s, ` +
      `completed ${perS(rows, 'server_completed', w).toFixed(1)}/s`;
    const msg = `p ${p}; baseline: ${figures(base)}; loss: ${figures(loss)}; after: ${figures(after)}`;
    tc.diagnostic(msg);
    assert.ok(sum(rows, 'attempts', ...base) / sum(rows, 'offered', ...base) < 1.01, msg);
    // Each reply lost with p costs a timeout and an immediate retry (4 attempts at most).
    assertLossAmplification(rows, loss, p, 4, { origins: 'offered', attempts: 'attempts' }, msg);
    // The loss is downstream: a reply is lost after the api did the work, so it receives and
    // completes every attempt, the retries included (its load ~295/s of its 400/s); upstream
    // loss would keep the lost attempts from it. Goodput holds.
    const attempts = sum(rows, 'attempts', ...loss);
    for (const col of ['server_received', 'server_completed']) {
      const share = sum(rows, col, ...loss) / attempts;
      assert.ok(share > 0.95 && share < 1.05, `${col} ${share.toFixed(3)} per attempt; ${msg}`);
    }
    assert.ok(perS(rows, 'goodput', loss) > 0.9 * perS(rows, 'goodput', base), msg);
    // After it: one attempt per origin again.
    assert.ok(sum(rows, 'attempts', ...after) / sum(rows, 'offered', ...after) < 1.01, msg);
  });
});

describe('reproduction suite: message loss on the database link', () => {
  test('db-loss recovers; while the postgres link loses queries the api sends 1 + p + p² attempts per query and few queries fail', async () => {
    const p = lossProbability('db-loss');
    const { s, rows } = await runScaled('experiments/db-loss.yaml');
    assertClaimed('db-loss', s);
    // The loss in its steady state: a second after it began (a lost attempt is retried
    // 200 ms later) to its end; after it, from two seconds on (the stalled connections replaced).
    const { base, loss, after } = lossWindows(s, rows, 1, 2);
    const figures = (w: Window): string =>
      `goodput ${perS(rows, 'goodput', w).toFixed(2)}/s, ${perS(rows, 'db_queries', w).toFixed(2)} queries/s, ` +
      `${perS(rows, 'db_attempts', w).toFixed(2)} attempts/s, ${perS(rows, 'timed_out', w).toFixed(2)} timed out/s`;
    const msg = `p ${p}; baseline: ${figures(base)}; loss: ${figures(loss)}; after: ${figures(after)}`;

    // Healthy link: one attempt per query.
    assert.ok(perS(rows, 'db_attempts', base) / perS(rows, 'db_queries', base) < 1.02, msg);

    // The loss: each attempt lost with p is abandoned after the query timeout and retried on
    // another connection (3 attempts at most), so a query costs 1 + p + p² attempts.
    const queries = sum(rows, 'db_queries', ...loss);
    assert.ok(queries > 500, msg);
    assertLossAmplification(rows, loss, p, 3, { origins: 'db_queries', attempts: 'db_attempts' }, msg);
    // Only a query whose three attempts are all lost fails (p³); without the retries a share
    // p would, and without the timeout every connection would stall at its first loss.
    const failed = sum(rows, 'timed_out', ...loss);
    assert.ok(failed < p * p * queries, `${failed} requests timed out of ${queries} queries; ${msg}`);
    const baseGoodput = perS(rows, 'goodput', base);
    assert.ok(perS(rows, 'goodput', loss) > 0.95 * baseGoodput, msg);
    assert.ok(Math.max(...rows.map((r) => Number(r['db_pool_waiting'] ?? 0))) < 16, msg);

    // After it: one attempt per query again.
    assert.ok(perS(rows, 'db_attempts', after) / perS(rows, 'db_queries', after) < 1.02, msg);
    assert.ok(perS(rows, 'goodput', after) >= 0.9 * baseGoodput, msg);
  });
});
