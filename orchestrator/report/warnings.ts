import type { RunSummary } from '../analysis/summary.js';

/**
 * A run's measurement-quality warnings: those in its summary.json, plus any the report
 * finds in the summary's own figures that the summary did not state (an older summary,
 * or a field another part adds). The checks (seeds/002 "reading the report"):
 *   - offered ≠ recorded: some origins left no outcome; the run is unusable;
 *   - late sends above 0.1% of origins: the generator fell behind its schedule;
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
  if (s.offered > 0 && s.lateSends / s.offered > 0.001 && !said(/late send/))
    out.push(
      `${s.lateSends} late sends (${pct(s.lateSends / s.offered)} of origins sent more than 1 ms after their intended time): the generator could not keep the schedule`,
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
