/**
 * The client policies' own CPU per origin (node dist/benchmarks/policyStack.js): origins
 * through retry, observe (into a real Recorder) and timeout over a transport that answers
 * at once, on a clock whose timers cost nothing, so what is measured is the policy
 * layers and the recording. Two transports: one that dispatches natively (the
 * simulator's seam) and one with only a promise `send` (the path of a transport without
 * dispatch). Two loads: every first try succeeds, or every first try fails (5xx) and its
 * immediate retry succeeds. Prints ns per origin (CPU time, best of five); asserts nothing.
 */
import type { Clock } from '../foundation/clock.js';
import { seededRng } from '../foundation/rng.js';
import { leanController } from '../bench/leanAbort.js';
import type { Attempt, Origin } from '../bench/outcome.js';
import { policyEnv, stack, viaTransport } from '../bench/policy/ClientPolicy.js';
import { SETTLED, type AttemptHandler, type TransportHandler } from '../bench/policy/dispatch.js';
import { observe } from '../bench/policy/observe.js';
import { retry } from '../bench/policy/retry.js';
import { attemptTimeout } from '../bench/policy/timeout.js';
import { Recorder } from '../bench/record/Recorder.js';
import type { Transport, TransportResult } from '../bench/transport/Transport.js';

const ORIGINS = 200_000;
const ROUNDS = 5;

let nowMs = 0;
const noop = (): void => {};
/** Time stands still; a timer is never due (every attempt answers at once). */
const clock: Clock = { now: () => nowMs, timer: () => noop, sleepUntil: () => Promise.resolve() };

const OK: TransportResult = { kind: 'ok', status: 200 };
const FAIL: TransportResult = { kind: 'http-5xx', status: 503 };
const answer = (a: Attempt, failFirst: boolean): TransportResult => (failFirst && a.number === 1 ? FAIL : OK);

function native(failFirst: boolean): Transport {
  return {
    dispatch(a: Attempt, _h: Record<string, string> | undefined, handler: TransportHandler) {
      handler.onResult(answer(a, failFirst));
      return SETTLED;
    },
    send: (a) => Promise.resolve(answer(a, failFirst)),
    close: async () => {},
  } as Transport;
}

function promiseOnly(failFirst: boolean): Transport {
  return { send: (a) => Promise.resolve(answer(a, failFirst)), close: async () => {} };
}

/** CPU ns per origin for ORIGINS origins through the stack over `transport`. */
async function measure(transport: Transport): Promise<number> {
  const recorder = new Recorder({});
  const env = { ...policyEnv(clock, seededRng(1)), newController: leanController };
  const dispatch = stack(
    [retry({ maxAttempts: 4 }), observe(recorder, clock), attemptTimeout(500)],
    viaTransport(transport, clock, { newController: leanController }),
    env,
  );
  let answered = 0;
  let all: () => void = noop;
  const handler: AttemptHandler = {
    onResponse: () => {
      if (++answered === ORIGINS) all();
    },
  };
  const done = new Promise<void>((resolve) => (all = resolve));
  const t0 = process.cpuUsage();
  for (let id = 0; id < ORIGINS; id++) {
    nowMs = id / 1000; // 1 000 origins/s
    const origin: Origin = { id, intendedMs: nowMs, deadlineMs: nowMs + 10_000 };
    dispatch({ origin, number: 1 }, handler);
  }
  await done;
  const t = process.cpuUsage(t0);
  recorder.close();
  return ((t.user + t.system) * 1000) / ORIGINS;
}

async function best(make: () => Transport): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ROUNDS; i++) min = Math.min(min, await measure(make()));
  return min;
}

const rows: [string, () => Transport][] = [
  ['native dispatch, first try ok', () => native(false)],
  ['native dispatch, one retry each', () => native(true)],
  ['promise send, first try ok', () => promiseOnly(false)],
  ['promise send, one retry each', () => promiseOnly(true)],
];
console.log(`retry + observe + timeout, ${ORIGINS} origins, CPU ns per origin (best of ${ROUNDS}):`);
for (const [name, make] of rows) console.log(`  ${name.padEnd(34)} ${Math.round(await best(make))}`);
