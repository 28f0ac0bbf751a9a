import type { Rng } from '../../foundation/rng.js';

/**
 * Token counting without a tokenizer: about 4 characters per token (OpenAI's rule of
 * thumb for English), plus OpenAI cookbook's framing of 3 tokens per chat message and 3
 * priming the reply. Good enough to make TTFT and context checks grow with the prompt.
 */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Chat messages' content: a string, or an array of parts of which text parts count. */
export function promptTokens(messages: readonly unknown[]): number {
  let n = 3;
  for (const m of messages) {
    n += 3;
    const content = (m as { content?: unknown } | null)?.content;
    if (typeof content === 'string') n += textTokens(content);
    else if (Array.isArray(content))
      for (const part of content) {
        const t = (part as { text?: unknown } | null)?.text;
        if (typeof t === 'string') n += textTokens(t);
      }
  }
  return n;
}

// Words of a fake answer: one token each. Each is JSON-safe (no quotes or backslashes).
const WORDS = (
  'the of and to in is that it for on with as was at by an be this from or are have not but had ' +
  'they you which one were all we when there can been has more if will no would so what out up ' +
  'system load queue retry latency token stream request answer model provider cache worker ' +
  'capacity failure recovery timeout signal metric window sample rate burst sustain client server'
).split(' ');

/** The i-th token's text: the first one bare, later ones with a leading space. */
export function tokenText(rng: Rng, first: boolean): string {
  const w = WORDS[Math.floor(rng.next() * WORDS.length)]!;
  return first ? w : ' ' + w;
}

/** A whole answer of n tokens from the request's text stream (what the stream sends, joined). */
export function answerTokens(rng: Rng, n: number): string[] {
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = tokenText(rng, i === 0);
  return out;
}
