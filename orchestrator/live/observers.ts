import type { TriggerRecord } from '../analysis/summary.js';
import { annotateRun } from '../grafana/annotateRun.js';
import type { Lab } from '../lab/Lab.js';
import { createLiveMetrics, type LiveMetrics } from './liveMetrics.js';
import { startMetricsServer, type MetricsListener, type MetricsServer } from './metricsServer.js';

/** What watches a run from outside: the live /metrics server and Grafana annotations. */
export interface ObserveOptions {
  /** Port of the live /metrics server; undefined: none. */
  readonly metricsPort?: number | undefined;
  /**
   * Hosts to bind besides 127.0.0.1: the Docker bridge's gateway, so Prometheus in a
   * container reaches it as host.docker.internal (host-gateway).
   */
  readonly metricsHosts?: readonly string[];
  /**
   * The address the swarm stack's Prometheus scrapes (`lab up --metrics-address`, or the one
   * the engine sees), served only to a scrape with its bearer token: other machines reach it.
   */
  readonly metricsScrape?:
    { readonly host: string; readonly port: number; readonly token: string } | undefined;
  /** Grafana to annotate (run span, trigger windows); undefined: none. */
  readonly grafanaUrl?: string | undefined;
}

/** The default port of the live metrics (prometheus/prometheus.yml scrapes host.docker.internal:9464). */
export const DEFAULT_METRICS_PORT = 9464;

export class RunObservers {
  readonly metrics: LiveMetrics | undefined;
  private server: MetricsServer | undefined;

  constructor(
    private readonly opts: ObserveOptions,
    lab: Lab,
    private readonly say: (line: string) => void,
  ) {
    this.metrics = opts.metricsPort !== undefined ? createLiveMetrics(() => lab.processes()) : undefined;
  }

  async start(): Promise<void> {
    if (!this.metrics || this.opts.metricsPort === undefined) return;
    const scrape = this.opts.metricsScrape;
    const hosts: MetricsListener[] = [
      '127.0.0.1',
      ...(this.opts.metricsHosts ?? []).filter((h) => h !== '127.0.0.1' && h !== scrape?.host),
      ...(scrape ? [scrape] : []),
    ];
    this.server = await startMetricsServer(this.metrics.registry, hosts, this.opts.metricsPort);
    if (this.server.addresses.length > 0)
      this.say(`  live metrics: ${this.server.addresses.map((a) => `http://${a}/metrics`).join(', ')}`);
    for (const f of this.server.failed) this.say(`  live metrics: cannot listen on ${f}; going on without`);
  }

  /** Stops the server; annotates Grafana (a failure there is said, never fatal). */
  async finish(run: {
    experiment: string;
    run: number;
    originEpochMs: number | undefined;
    endMs: number;
    triggers: readonly TriggerRecord[];
  }): Promise<void> {
    await this.server?.close();
    this.server = undefined;
    if (this.opts.grafanaUrl === undefined || run.originEpochMs === undefined) return;
    try {
      const n = await annotateRun(this.opts.grafanaUrl, { ...run, originEpochMs: run.originEpochMs });
      this.say(`  Grafana: ${n} annotation${n === 1 ? '' : 's'} added`);
    } catch (err) {
      this.say(`  Grafana: annotations not added: ${(err as Error).message}`);
    }
  }
}
