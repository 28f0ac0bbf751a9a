import type { Clock } from '../../foundation/clock.js';

/**
 * What the client saw of a streamed (server-sent events) answer in OpenAI's chunk
 * format, timed on the client's clock:
 *   ttftMs  from sending the attempt to the first chunk with non-empty content
 *           (GuideLLM's and llmperf's TTFT; the role chunk does not count);
 *   itlMs   (last token − first token) / (tokens − 1): GuideLLM's ITL, vLLM's TPOT,
 *           the first token excluded; absent below two tokens.
 */
export interface StreamTiming {
  readonly ttftMs?: number;
  readonly itlMs?: number;
  readonly tokens: number;
  /** Whether `data: [DONE]` arrived. */
  readonly done: boolean;
}

const CONTENT = '"delta":{"content":"';
const DONE = 'data: [DONE]';

/**
 * Counts content chunks as SSE frames arrive. Frames are split on the blank line that
 * ends each; only the frame's text is searched (no JSON parse per token).
 */
export class SseMeter {
  private carry = '';
  private tokens = 0;
  private firstMs = Number.NaN;
  private lastMs = Number.NaN;
  private done = false;

  constructor(
    private readonly clock: Clock,
    private readonly sentMs: number,
  ) {}

  /** Feeds one piece of the body; returns the tokens seen so far. */
  push(chunk: Buffer | string): number {
    const text = this.carry + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    let start = 0;
    let end: number;
    let now: number | undefined;
    while ((end = text.indexOf('\n\n', start)) >= 0) {
      const frame = text.slice(start, end);
      start = end + 2;
      const i = frame.indexOf(CONTENT);
      if (i >= 0 && frame.charCodeAt(i + CONTENT.length) !== 34 /* '"': empty content */) {
        now ??= this.clock.now();
        if (this.tokens === 0) this.firstMs = now;
        this.lastMs = now;
        this.tokens++;
      } else if (frame.startsWith(DONE)) this.done = true;
    }
    this.carry = text.slice(start);
    return this.tokens;
  }

  result(): StreamTiming {
    return {
      tokens: this.tokens,
      done: this.done,
      ...(this.tokens > 0 ? { ttftMs: this.firstMs - this.sentMs } : {}),
      ...(this.tokens > 1 ? { itlMs: (this.lastMs - this.firstMs) / (this.tokens - 1) } : {}),
    };
  }
}
