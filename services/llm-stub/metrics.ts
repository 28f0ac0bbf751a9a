import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { STUB_OUTCOMES } from './outcomes.js';

/** The stub's Prometheus metrics (GET /metrics). */
export function createStubMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'llm_stub_requests_total',
      help: `Model requests, by endpoint and outcome (${STUB_OUTCOMES.join(', ')}; client_gone: the client left before the answer ended).`,
      labelNames: ['endpoint', 'outcome'] as const,
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'llm_stub_requests_in_flight',
      help: 'Model requests received and not yet answered or abandoned, by endpoint.',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    }),
    streamsOpen: new Gauge({
      name: 'llm_stub_streams_open',
      help: 'Streaming chat requests open (from arrival, through the time to first token, to the end of the stream).',
      registers: [registry],
    }),
    ttft: new Histogram({
      name: 'llm_stub_ttft_seconds',
      help: 'Time from arrival to the role chunk (with the first token) of a streamed answer.',
      buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30],
      registers: [registry],
    }),
    outputTokens: new Counter({
      name: 'llm_stub_output_tokens_total',
      help: 'Content tokens sent, as they are written (each streamed chunk, a whole answer when sent): its increase per second is tokens per second.',
      registers: [registry],
    }),
  };
}

export type StubMetrics = ReturnType<typeof createStubMetrics>;
