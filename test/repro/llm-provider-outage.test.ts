import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';

// The reproduction suite, the LLM provider's outage (issue 19): llm-provider-outage.yaml
// at the suite's scale on the local lab, asserting what its catalogue row claims
// (experiments/README.md) and the provider's own series (the stub's /metrics scraped into
// timeseries.csv). No simulated twin: the simulated lab has no provider (sim/refusals.ts).

describe('reproduction suite: the LLM provider outage', () => {
  test('llm-provider-outage recovers; while the provider is down it answers every request 503 and the api sends it about three per call', async () => {
    const { s, rows } = await runScaled('experiments/llm-provider-outage.yaml');
    assertClaimed('llm-provider-outage', s);
    const t = s.trigger!;
    // Whole seconds: the baseline's, the outage's, and the observation's from one second
    // after the provider is back (the provider counts a request when it ends it, and a
    // retry started in the outage's last second may end in the next).
    const base: [number, number] = [
      Math.ceil(t.startS) - Math.floor(s.baseline.seconds),
      Math.floor(t.startS),
    ];
    const out: [number, number] = [Math.ceil(t.startS), Math.floor(t.endS)];
    const observeEnd =
      1 + Math.max(...rows.filter((r) => r['phase'] === 'observe').map((r) => r['t_s'] as number));
    const after: [number, number] = [Math.ceil(t.endS) + 1, observeEnd];
    assert.ok(out[1] - out[0] >= 5 && after[1] - after[0] >= 10, `outage ${out}, after ${after}`);
    const perS = (col: string, w: [number, number]): number => sum(rows, col, w[0], w[1]) / (w[1] - w[0]);
    const figures = (w: [number, number]): string =>
      `goodput ${perS('goodput', w).toFixed(1)}/s, provider ${perS('llm_provider_requests', w).toFixed(1)} requests/s, ` +
      `${perS('llm_provider_errors_down', w).toFixed(1)} answered 503/s, ${perS('llm_calls', w).toFixed(1)} calls wanted/s`;
    const msg = `baseline: ${figures(base)}; outage: ${figures(out)}; after: ${figures(after)}`;

    // Healthy provider: one request per wanted call, none refused.
    assert.equal(sum(rows, 'llm_provider_errors_down', ...base), 0, msg);
    const baseRequests = perS('llm_provider_requests', base);
    assert.ok(baseRequests > 0 && perS('llm_provider_tokens', base) > 0, msg);
    assert.ok(perS('llm_attempts', base) / perS('llm_calls', base) < 1.1, msg);

    // The outage: every provider request answered 503 (the unavailable kind), and the api's
    // retries send it about three (maxAttempts) per call it wants: more requests than in the
    // baseline although fewer calls are wanted (an agent run's second step never starts).
    const outRequests = perS('llm_provider_requests', out);
    const outDown = perS('llm_provider_errors_down', out);
    assert.ok(outDown >= 0.8 * outRequests && outDown > 0, msg);
    const perCall = outRequests / perS('llm_calls', out);
    assert.ok(
      perCall > 2.2 && perCall < 4,
      `${perCall.toFixed(2)} provider requests per wanted call; ${msg}`,
    );
    assert.ok(outRequests > 1.5 * baseRequests, msg);
    assert.ok(Math.max(...rows.map((r) => Number(r['amplification_llm'] ?? 0))) > 2, msg);
    // The list reads and ingests never wait on the provider: goodput falls to about half.
    const baseGoodput = perS('goodput', base);
    assert.ok(perS('goodput', out) < 0.75 * baseGoodput && perS('goodput', out) > 0.3 * baseGoodput, msg);

    // After it: no refusal, one request per call again, tokens streaming, goodput back.
    assert.equal(sum(rows, 'llm_provider_errors_down', ...after), 0, msg);
    assert.ok(perS('llm_attempts', after) / perS('llm_calls', after) < 1.1, msg);
    const afterRequests = perS('llm_provider_requests', after);
    assert.ok(afterRequests > 0.5 * baseRequests && afterRequests < 1.5 * baseRequests, msg);
    assert.ok(perS('llm_provider_tokens', after) > 0.5 * perS('llm_provider_tokens', base), msg);
    // (The recovery criterion's threshold: goodput's dip outlives the outage by the
    // response time of the chats and agent runs sent after it.)
    assert.ok(perS('goodput', after) >= 0.7 * baseGoodput, msg);
  });
});
