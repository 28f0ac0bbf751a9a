import { BenchError } from '../../foundation/errors.js';
import { within } from '../../foundation/within.js';

/** The uid of the provisioned dashboard (grafana/dashboards/metabench.json). */
export const DASHBOARD_UID = 'metabench';

export interface Annotation {
  /** Epoch ms. */
  readonly time: number;
  /** Epoch ms; a region when present. */
  readonly timeEnd?: number;
  readonly tags: readonly string[];
  readonly text: string;
}

export interface DashboardPanel {
  readonly id: number;
  readonly title: string;
  readonly type: string;
}

/**
 * Grafana's HTTP API, the three calls metabench makes: annotations, the dashboard's
 * panels, and a panel rendered as PNG (needs the image renderer). The URL may carry
 * credentials (http://admin:admin@127.0.0.1:3000); METABENCH_GRAFANA_TOKEN is sent as
 * a bearer token. The lab's Grafana allows anonymous admins on loopback and needs neither.
 */
export class GrafanaClient {
  readonly base: string;
  private readonly auth: string | undefined;

  constructor(url: string, token: string | undefined = process.env.METABENCH_GRAFANA_TOKEN) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new BenchError('E_USAGE', `--grafana-url ${url}: not a URL (e.g. http://127.0.0.1:3000)`);
    }
    this.auth = token
      ? `Bearer ${token}`
      : u.username
        ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`
        : undefined;
    u.username = '';
    u.password = '';
    this.base = u.toString().replace(/\/+$/, '');
  }

  private async call(path: string, init: RequestInit, what: string, timeoutMs = 10_000): Promise<Response> {
    let res: Response;
    try {
      res = await within(timeoutMs, (signal) =>
        fetch(`${this.base}${path}`, {
          ...init,
          headers: { ...(this.auth ? { authorization: this.auth } : {}), ...init.headers },
          signal,
        }),
      );
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `cannot reach Grafana at ${this.base} to ${what} (${e.cause?.code ?? e.message})`,
        'bring the lab up with Grafana (metabench lab up --runtime docker), or pass --grafana-url',
      );
    }
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).trim().slice(0, 300);
      throw new BenchError(
        'E_LAB',
        `Grafana at ${this.base}: ${what}: HTTP ${res.status} ${messageOf(text)}`,
      );
    }
    return res;
  }

  async annotate(a: Annotation): Promise<void> {
    await this.call(
      '/api/annotations',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          dashboardUID: DASHBOARD_UID,
          time: Math.round(a.time),
          ...(a.timeEnd !== undefined ? { timeEnd: Math.round(a.timeEnd) } : {}),
          tags: a.tags,
          text: a.text,
        }),
      },
      'add an annotation',
    );
  }

  /** The dashboard's panels (rows left out, panels inside collapsed rows included). */
  async panels(uid = DASHBOARD_UID): Promise<DashboardPanel[]> {
    const res = await this.call(
      `/api/dashboards/uid/${encodeURIComponent(uid)}`,
      {},
      `read dashboard ${uid}`,
    );
    const body = (await res.json()) as { dashboard?: { panels?: RawPanel[] } };
    return flattenPanels(body.dashboard?.panels ?? []);
  }

  /** One panel as PNG over [fromMs, toMs] (epoch ms), through /render/d-solo. */
  async renderPanel(
    panelId: number,
    fromMs: number,
    toMs: number,
    size: { width: number; height: number } = { width: 1000, height: 500 },
    uid = DASHBOARD_UID,
  ): Promise<Buffer> {
    const q = new URLSearchParams({
      orgId: '1',
      panelId: String(panelId),
      from: String(Math.floor(fromMs)),
      to: String(Math.ceil(toMs)),
      width: String(size.width),
      height: String(size.height),
      tz: 'UTC',
    });
    const res = await this.call(
      `/render/d-solo/${encodeURIComponent(uid)}/${encodeURIComponent(uid)}?${q}`,
      {},
      `render panel ${panelId}`,
      120_000,
    );
    const png = Buffer.from(await res.arrayBuffer());
    if (!png.subarray(0, 8).equals(PNG_MAGIC))
      throw new BenchError(
        'E_LAB',
        `Grafana at ${this.base} answered panel ${panelId} with something other than a PNG`,
        'is the image renderer (grafana-image-renderer) running?',
      );
    return png;
  }
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface RawPanel {
  id?: number;
  title?: string;
  type?: string;
  panels?: RawPanel[];
}

export function flattenPanels(panels: readonly RawPanel[]): DashboardPanel[] {
  const out: DashboardPanel[] = [];
  for (const p of panels) {
    if (p.type === 'row') out.push(...flattenPanels(p.panels ?? []));
    else if (typeof p.id === 'number')
      out.push({ id: p.id, title: p.title ?? `panel ${p.id}`, type: p.type ?? '' });
  }
  return out;
}

function messageOf(text: string): string {
  try {
    return String((JSON.parse(text) as { message?: unknown }).message ?? text);
  } catch {
    return text;
  }
}
