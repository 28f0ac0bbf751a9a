import type { LatencySummary } from '../../bench/record/histogram.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import { round } from '../../foundation/round.js';

/** A latency summary with no samples: every figure unmeasured. */
export function emptyLatency(): LatencySummary {
  return { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
}

/**
 * The omission factor of the baseline (DESIGN.md §2): p99(response) / p99(service), null
 * when either is unmeasured.
 */
export function omissionFactor(recorded: Recorded): number | null {
  const bw = recorded.windows['baseline'];
  const bResp = bw?.response.p99 ?? null;
  const bServ = bw?.service.p99 ?? null;
  return bResp !== null && bServ !== null && bServ > 0 ? round(bResp / bServ, 3) : null;
}
