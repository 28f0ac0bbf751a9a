import type { RunSummary } from '../analysis/summary.js';

/**
 * A run's measurement-quality warnings: those in its summary.json, plus any the report
 * finds in the summary's own figures that the summary did not state (an older summary,
 * or a field another part adds). The checks (seeds/002 "reading the report"):
 *   - offered ≠ recorded: some origins left no outcome; the run is unusable;
 *   - the generator fell behind its schedule: schedule lag p99 above the run's lag limit
 *     (DESIGN.md §2, check 4; the late-send count is in Measurement quality either way);
 *     a summary from before run validity has no limit: there, late sends above 0.1%;
 *   - omission factor above 2: response times are mostly waiting before the send;
 *   - the client's connection cap turned the open loop closed: attempts waited for a
 *     free connection (`clientWait`, a latency summary of those waits).
 */
export function runWarnings(s: RunSummary): string[] {
  const out = [...s.warnings];
  const said = (re: RegExp) => out.some((w) => re.test(w));
  if (s.offered !== s.recorded && !said(/recorded/))
    out.push(
      `offered (${s.offered}) != recorded (${s.recorded}): some origin requests have no outcome; this run is unusable`,
    );
  const limits = (s.validity as RunSummary['validity'] | undefined)?.limits;
  const lagP99 = s.scheduleLagMs.p99;
  // A replay that judged the run's lateness harmless (its limit is then not the fixed one) overrides the fixed limit.
  const lag = (s.validity as RunSummary['validity'] | undefined)?.checks.find((c) => c.check === 'lag');
  const replayedHarmless = lag?.ok === true && lag.limit !== limits?.lagP99Ms;
  const behind = replayedHarmless
    ? false
    : limits
      ? lagP99 !== null && lagP99 > limits.lagP99Ms
      : s.offered > 0 && s.lateSends / s.offered > 0.001;
  if (behind && !said(/late send/))
    out.push(
      `${s.lateSends} late sends (${pct(s.lateSends / Math.max(1, s.offered))} of origins sent more than 1 ms after their intended time)${limits ? `, schedule lag p99 ${lagP99} ms above its limit of ${limits.lagP99Ms} ms (${limits.lagP99Why})` : ''}: the generator could not keep the schedule`,
    );
  if (s.omissionFactor !== null && s.omissionFactor > 2 && !said(/omission factor/))
    out.push(
      `omission factor ${s.omissionFactor} > 2 in the baseline: response times include long waits before sending`,
    );
  const waited = connectionCapWaits(s);
  if (waited !== null && !said(/connection cap|closed loop|closed-loop/))
    out.push(
      `the client's connection cap turned the open loop closed: ${waited.count} attempts waited for a free connection${waited.detail}, so part of the response time is the client's own queue`,
    );
  return out;
}

/** How many attempts waited for a client connection, when the summary says so and it happened. */
function connectionCapWaits(s: RunSummary): { count: number; detail: string } | null {
  const w = s.clientWait;
  if (!w || w.samples === 0) return null;
  return { count: w.samples, detail: w.p99 !== null ? ` (wait p99 ${w.p99} ms, n=${w.samples})` : '' };
}

function pct(x: number): string {
  return `${Math.round(x * 10000) / 100}%`;
}
