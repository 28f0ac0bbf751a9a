/**
 * Reads the Prometheus text exposition format far enough for our scraper: one sample
 * per line, `name{labels} value [timestamp]`, comments skipped. Samples with labels
 * are summed per metric name unless asked for by their full `name{labels}` text.
 */
export type Samples = Map<string, number>;

export function parsePrometheusText(text: string): Samples {
  const out: Samples = new Map();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const close = brace >= 0 ? line.indexOf('}', brace) : -1;
    const nameEnd = brace >= 0 ? brace : line.indexOf(' ');
    if (nameEnd <= 0) continue;
    const name = line.slice(0, nameEnd);
    const rest = (close >= 0 ? line.slice(close + 1) : line.slice(nameEnd)).trim();
    const value = Number(rest.split(/\s+/)[0]);
    if (!Number.isFinite(value)) continue;
    if (close >= 0) out.set(line.slice(0, close + 1), value);
    out.set(name, (brace >= 0 ? (out.get(name) ?? 0) : 0) + value);
  }
  return out;
}
