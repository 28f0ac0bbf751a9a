import type { ServerResponse } from 'node:http';
import type { ResponsePlan } from './latency.js';
import { openaiHeaders, type Count, type StubContext } from './stubContext.js';
import { ChunkWriter, usage } from './wire.js';

/**
 * Paces a streamed chat answer: role chunk and token 0 at TTFT, token i at TTFT + Σ gaps.
 * `cutAfter` (≥ 0) cuts the connection after that many tokens, with no finish chunk.
 */
export function stream(
  ctx: StubContext,
  res: ServerResponse,
  t0: number,
  plan: ResponsePlan,
  tokens: readonly string[],
  w: ChunkWriter,
  prompt: number,
  cutAfter: number,
  count: Count,
): void {
  const metrics = ctx.metrics;
  metrics.streamsOpen.inc();
  let timer: NodeJS.Timeout | undefined;
  // A client that leaves mid-stream is counted client_gone by the server (server.ts).
  res.once('close', () => {
    metrics.streamsOpen.dec();
    clearTimeout(timer);
  });
  let i = 0;
  let due = t0 + plan.ttftMs;
  let started = false;
  const step = (): void => {
    timer = undefined;
    if (res.destroyed) return;
    let out = '';
    if (!started) {
      // Token 0 is due at TTFT by definition (a timer may fire a little early).
      started = true;
      due = performance.now();
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        ...openaiHeaders(ctx, performance.now() - t0),
      });
      metrics.ttft.observe((performance.now() - t0) / 1000);
      out = w.role();
    }
    // Every token already due goes in this write (a late timer does not stretch the answer).
    const now = performance.now();
    const from = i;
    while (i < tokens.length && due <= now + 0.5) {
      if (i === cutAfter) break;
      out += w.content(JSON.stringify(tokens[i]));
      if (i < plan.gapsMs.length) due += plan.gapsMs[i]!;
      i++;
    }
    // Counted as written, so the counter's increase per second is the tokens per second.
    if (i > from) metrics.outputTokens.inc(i - from);
    if (i === cutAfter) {
      count('cut');
      // Written first, then the connection is destroyed: no finish chunk, no [DONE].
      res.write(out, () => res.socket?.destroy());
      return;
    }
    if (i === tokens.length) {
      out += w.finish(plan.finishReason);
      if (w.includesUsage) out += w.usage(usage(prompt, tokens.length));
      out += ChunkWriter.DONE;
      count('ok');
      res.end(out);
      return;
    }
    res.write(out);
    timer = setTimeout(step, Math.max(0, due - performance.now()));
  };
  timer = setTimeout(step, Math.max(0, due - performance.now()));
}
