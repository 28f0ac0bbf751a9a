/**
 * An arrival process yields the intended times of origin requests: an open-loop
 * schedule that does not depend on how the system answers. The driver sleeps until
 * each intended time and sends; when it wakes late it sends at once (and records the
 * lag), so the schedule never drifts.
 */
export interface ArrivalProcess {
  /** Intended time (ms since run start) of the next origin request; undefined when done. Non-decreasing. */
  next(): number | undefined;
  /** The offered rate (origin requests per second) at `tMs`, for plots and plans. */
  rate(tMs: number): number;
  /** A one-line description, e.g. "poisson 280/s for 60 s (seed 42)". */
  describe(): string;
}
