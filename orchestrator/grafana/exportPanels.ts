import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import type { GrafanaClient } from './client.js';

/** Margins around the runs, so a panel shows the lab before the load and the drain after it. */
const BEFORE_MS = 10_000;
const AFTER_MS = 30_000;

/**
 * The wall-clock span of a results folder's runs (epoch ms), from each run's
 * manifest.json: its start (before the lab came up) to that start plus the planned
 * duration, with margins.
 */
export function runsTimeRange(dir: string): { fromMs: number; toMs: number; runs: number } {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^run-\d+$/.test(n));
  } catch {
    throw new BenchError('E_USAGE', `${dir}: no such results folder`);
  }
  const spans: { from: number; to: number }[] = [];
  for (const n of names) {
    const file = join(dir, n, 'manifest.json');
    if (!existsSync(file)) continue;
    let m: { startedAt?: unknown; runtime?: unknown; plan?: { totalMs?: unknown } };
    try {
      m = JSON.parse(readFileSync(file, 'utf8')) as typeof m;
    } catch (err) {
      throw new BenchError('E_USAGE', `${file}: not JSON (${(err as Error).message})`);
    }
    // A simulated run ran in virtual time, with no lab: Grafana never saw it, so it is not asked.
    if (m.runtime === 'sim')
      throw new BenchError(
        'E_USAGE',
        `${dir} is a simulated run (${file}: runtime sim): it ran in virtual time, with no lab and no Grafana to have recorded it`,
        'export grafana takes a folder a lab run wrote (`metabench run --runtime docker`); a simulated run has its figures in report.html and figures/',
      );
    const start = typeof m.startedAt === 'string' ? Date.parse(m.startedAt) : Number.NaN;
    const total = typeof m.plan?.totalMs === 'number' ? m.plan.totalMs : Number.NaN;
    if (!Number.isFinite(start))
      throw new BenchError('E_USAGE', `${file}: startedAt is missing or not a date`);
    if (!Number.isFinite(total)) throw new BenchError('E_USAGE', `${file}: plan.totalMs is missing`);
    spans.push({ from: start, to: start + total });
  }
  if (spans.length === 0)
    throw new BenchError(
      'E_USAGE',
      `${dir}: not a results folder of \`metabench run\` (no run-*/manifest.json)`,
    );
  return {
    fromMs: Math.min(...spans.map((s) => s.from)) - BEFORE_MS,
    toMs: Math.max(...spans.map((s) => s.to)) + AFTER_MS,
    runs: spans.length,
  };
}

export function slug(title: string): string {
  return (
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'panel'
  );
}

/** Renders every panel of the dashboard over the folder's runs into DIR/grafana/<nn>-<title>.png. */
export async function exportPanels(
  client: GrafanaClient,
  dir: string,
  size: { width: number; height: number },
): Promise<string[]> {
  const range = runsTimeRange(dir);
  const panels = await client.panels();
  if (panels.length === 0)
    throw new BenchError('E_LAB', `Grafana at ${client.base}: the dashboard has no panels`);
  const out = join(dir, 'grafana');
  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  for (const p of panels) {
    const png = await client.renderPanel(p.id, range.fromMs, range.toMs, size);
    const file = join(out, `${String(p.id).padStart(2, '0')}-${slug(p.title)}.png`);
    writeFileSync(file, png);
    written.push(file);
  }
  return written;
}
