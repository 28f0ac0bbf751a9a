import type { Recorder } from '../record/Recorder.js';
import type { ClientPolicy } from './ClientPolicy.js';

/** Records every attempt that passes through it. Sits below retry, so each try is counted. */
export function observe(recorder: Recorder): ClientPolicy {
  return (next) => async (attempt, signal) => {
    const r = await next(attempt, signal);
    recorder.attempt(attempt, r);
    return r;
  };
}
