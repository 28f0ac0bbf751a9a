import { NO_FAULTS, type FaultRates } from '../../services/llm-stub/faults.js';
import { profileSchema, type Profile } from '../../services/llm-stub/profile.js';
import { startLlmStub, type LlmStub } from '../../services/llm-stub/server.js';

/** A fast profile for wire tests: answers in a few ms, a fixed output length, no slow tail. */
export function fastProfile(over: { outputTokens?: number; contextWindow?: number } = {}): Profile {
  return profileSchema.parse({
    version: 1,
    name: 'test-fast',
    collected: { date: '2026-12-01', method: 'synthetic', source: 'test fixture' },
    model: 'gpt-4o-mini-2024-07-18',
    systemFingerprint: 'fp_test',
    contextWindow: over.contextWindow ?? 1000,
    ttft: { floor: '2ms', prefillPer1kTokens: '1ms', jitter: { mean: '1ms', sigma: 0.3 } },
    tokens: { gap: { mean: '1ms', sigma: 0.3 } },
    output: { dist: 'constant', mean: over.outputTokens ?? 12 },
    tail: { fraction: '0%', ttftFactor: '1x', tokenFactor: '1x' },
    embeddings: {
      model: 'text-embedding-3-small',
      dimensions: 64,
      floor: '1ms',
      perKTokens: '1ms',
      jitter: { mean: '1ms', sigma: 0.3 },
    },
    rateLimits: { requestsPerMinute: 100000, tokensPerMinute: 100000000, retryAfter: '1s' },
  });
}

export async function fastStub(
  rates: Partial<FaultRates> = {},
  seed = 11,
  profile = fastProfile(),
): Promise<LlmStub & { url: string }> {
  const stub = await startLlmStub({
    host: '127.0.0.1',
    port: 0,
    profile,
    seed,
    rates: { ...NO_FAULTS, ...rates },
  });
  return Object.assign(stub, { url: `http://127.0.0.1:${stub.port}` });
}

/** PUT /_stub/state. */
export async function setStubState(url: string, body: unknown): Promise<unknown> {
  const r = await fetch(`${url}/_stub/state`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`PUT /_stub/state: ${r.status} ${await r.text()}`);
  return r.json();
}
