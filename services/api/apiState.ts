/**
 * The api's run-time capacity switch (GET|PUT|POST /_api/state on the api; SimApi.setState in
 * the simulation): the `slowdown` trigger multiplies the work time, the `workers` trigger
 * shrinks the pool, each for its window.
 */
export interface ApiState {
  /** Work time multiplied by this (1: as declared). */
  readonly workFactor?: number;
  /** Workers in the pool. */
  readonly workers?: number;
  /** Back to the api as declared (work factor 1, its declared workers): the triggers' undo. */
  readonly reset?: true;
}

/**
 * Applies a `/_api/state` body ({ workFactor?, workers? }) to the handler and the pool;
 * returns what is wrong with it instead, changing nothing.
 */
export function applyApiState(
  body: unknown,
  handler: { workFactor: number },
  pool: { resize(n: number): void },
  /** The pool's declared size, what `reset` restores. */
  declaredWorkers: number,
): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'the body must be a JSON object: { "workFactor": 3 } or { "workers": 4 }';
  const { workFactor, workers, reset, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return `unknown field ${unknown[0]}: the state has workFactor, workers and reset`;
  if (reset !== undefined) {
    if (reset !== true || workFactor !== undefined || workers !== undefined)
      return 'reset is true, alone: { "reset": true }';
    handler.workFactor = 1;
    pool.resize(declaredWorkers);
    return undefined;
  }
  if (workFactor !== undefined && !(typeof workFactor === 'number' && workFactor > 0 && workFactor <= 1000))
    return `workFactor must be a number above 0 and at most 1000 (got ${JSON.stringify(workFactor)})`;
  if (workers !== undefined && !(typeof workers === 'number' && Number.isInteger(workers) && workers >= 1))
    return `workers must be a whole number of at least 1 (got ${JSON.stringify(workers)})`;
  if (typeof workFactor === 'number') handler.workFactor = workFactor;
  if (typeof workers === 'number') pool.resize(workers);
  return undefined;
}
