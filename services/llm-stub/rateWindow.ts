/**
 * The provider's quota as a fixed one-minute window of requests and tokens: what the
 * x-ratelimit-* headers report, and a 429 once either runs out. (A real provider's
 * limiter is finer-grained; a fixed window is enough to show a client meeting it.)
 */
export class RateWindow {
  private startMs = Number.NEGATIVE_INFINITY;
  private requests = 0;
  private tokens = 0;

  constructor(
    readonly requestLimit: number,
    readonly tokenLimit: number,
    private readonly lengthMs = 60_000,
  ) {}

  private roll(nowMs: number): void {
    if (nowMs - this.startMs >= this.lengthMs) {
      this.startMs = nowMs;
      this.requests = 0;
      this.tokens = 0;
    }
  }

  /** Counts a request of `tokens`; returns which limit it ran into (and when it resets), if any. */
  admit(nowMs: number, tokens: number): { kind: 'requests' | 'tokens'; retryMs: number } | undefined {
    this.roll(nowMs);
    const retryMs = this.startMs + this.lengthMs - nowMs;
    if (this.requests + 1 > this.requestLimit) return { kind: 'requests', retryMs };
    if (this.tokens + tokens > this.tokenLimit) return { kind: 'tokens', retryMs };
    this.requests++;
    this.tokens += tokens;
    return undefined;
  }

  snapshot(nowMs: number): {
    requestLimit: number;
    tokenLimit: number;
    requestsLeft: number;
    tokensLeft: number;
    resetMs: number;
  } {
    this.roll(nowMs);
    return {
      requestLimit: this.requestLimit,
      tokenLimit: this.tokenLimit,
      requestsLeft: Math.max(0, this.requestLimit - this.requests),
      tokensLeft: Math.max(0, this.tokenLimit - this.tokens),
      resetMs: this.startMs + this.lengthMs - nowMs,
    };
  }
}
