import { standardNormal } from '../../foundation/distributions.js';
import { deriveSeed, seededRng } from '../../foundation/rng.js';

/**
 * A unit vector that depends only on the text and the dimension: the same text always
 * embeds to the same vector (so retrieval over stub embeddings is repeatable), and
 * different texts to unrelated ones (nearly orthogonal in high dimensions).
 */
export function embedText(text: string, dimensions: number): Float32Array {
  const rng = seededRng(deriveSeed(dimensions, text), 'embedding');
  const v = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    const x = standardNormal(rng);
    v[i] = x;
    norm += x * x;
  }
  const k = 1 / Math.sqrt(norm || 1);
  for (let i = 0; i < dimensions; i++) v[i] = v[i]! * k;
  return v;
}

/** An input of OpenAI's embeddings endpoint, normalised: each item as text (token arrays joined). */
export function embeddingInputs(input: unknown): { texts: string[]; tokens: number } | string {
  const asText = (x: unknown): { text: string; tokens: number } | undefined => {
    if (typeof x === 'string') return { text: x, tokens: Math.ceil(x.length / 4) };
    if (Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t)))
      return { text: x.join(','), tokens: x.length };
    return undefined;
  };
  const one = asText(input);
  if (one) return { texts: [one.text], tokens: one.tokens };
  if (!Array.isArray(input) || input.length === 0)
    return "'input' must be a string, an array of strings, or an array of token arrays";
  const texts: string[] = [];
  let tokens = 0;
  for (const item of input) {
    const t = asText(item);
    if (!t) return "'input' must be a string, an array of strings, or an array of token arrays";
    texts.push(t.text);
    tokens += t.tokens;
  }
  return { texts, tokens };
}
