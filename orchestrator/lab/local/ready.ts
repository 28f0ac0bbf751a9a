import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchError } from '../../../foundation/errors.js';

/** How long a local process has to answer its first probe. */
export const READY_TIMEOUT_MS = 30_000;

/**
 * Polls `probe` every 100 ms until it resolves, for READY_TIMEOUT_MS; `check` runs before each
 * probe and throws to stop early (a process that exited while starting). On time out, a
 * preflight error says `what` did not answer, with the last probe's error and `hint`.
 */
export async function pollReady(
  what: string,
  probe: () => Promise<unknown>,
  check: () => void = () => {},
  hint?: string,
): Promise<void> {
  const until = performance.now() + READY_TIMEOUT_MS;
  let last: unknown;
  while (performance.now() < until) {
    check();
    try {
      await probe();
      return;
    } catch (err) {
      last = err;
      await sleep(100);
    }
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    `${what} did not answer within ${READY_TIMEOUT_MS / 1000} s (${(last as Error)?.message ?? 'no answer'})`,
    hint,
  );
}
