/**
 * How the stub counts the end of a model request (llm_stub_requests_total's `outcome`),
 * one name list for the stub and for whoever reads its metrics (the run's scraper).
 */
export const STUB_OUTCOMES = [
  'ok',
  'rate_limited',
  'server_error',
  'context_length',
  'cut',
  'hang',
  'down',
  'bad_request',
  'client_gone',
] as const;

export type StubOutcome = (typeof STUB_OUTCOMES)[number];

/** The outcomes that are the provider failing a request (not `ok`, not its client going away). */
export const STUB_ERROR_KINDS = STUB_OUTCOMES.filter(
  (o): o is Exclude<StubOutcome, 'ok' | 'client_gone'> => o !== 'ok' && o !== 'client_gone',
);
