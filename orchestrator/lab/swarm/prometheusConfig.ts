import { parse, stringify } from 'yaml';
import { BenchError } from '../../../foundation/errors.js';

/**
 * Prometheus's configuration in a swarm stack: prometheus/prometheus.yml (one description of
 * what is scraped) with its api jobs, static names of the docker lab's services, replaced by
 * one job that discovers the stack's api tasks from the engine (`dockerswarm_sd_configs`,
 * role tasks). Discovery follows swarm: a run's fresh api tasks, a task swarm replaces, a
 * replica on another node are scraped without the orchestrator writing anything, each
 * series labelled with its replica, task and node. docs/lab.md says why this and not file
 * targets.
 */

/** Where the engine's API is inside the Prometheus task (the node's socket, mounted read-only). */
export const ENGINE_SOCKET = '/var/run/docker.sock';

/** How often Prometheus lists the stack's tasks: three cheap API calls; a run's fresh api tasks are scraped within this. */
export const DISCOVERY_INTERVAL = '5s';

/** The docker lab's api jobs (static api, api1… names), which discovery replaces. */
const STATIC_API_JOBS = ['api', 'api-replicas'];

type Job = Record<string, unknown> & { job_name?: unknown };

/** An RE2 pattern matching `s` literally (stack names may hold dots). */
const literal = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The api job of a swarm stack: its api tasks on the stack's network, labelled component, replica, task and node. */
export function swarmApiJob(stack: string): Job {
  const s = literal(stack);
  return {
    job_name: 'api',
    dockerswarm_sd_configs: [
      {
        host: `unix://${ENGINE_SOCKET}`,
        role: 'tasks',
        // For a task without published ports; the lab's api publishes one (relabelled below).
        port: 8080,
        refresh_interval: DISCOVERY_INTERVAL,
        filters: [{ name: 'label', values: [`com.docker.stack.namespace=${stack}`] }],
      },
    ],
    relabel_configs: [
      // The api replicas' services (api, api1…) of this stack, not Redis or another stack's api.
      { source_labels: ['__meta_dockerswarm_service_name'], regex: `${s}_api[0-9]*`, action: 'keep' },
      // A task swarm is shutting down (an earlier run's) is no longer a replica of the lab.
      { source_labels: ['__meta_dockerswarm_task_desired_state'], regex: 'running', action: 'keep' },
      // Its address on the stack's network, where Prometheus reaches it; a node address with a
      // host-mode port is the node's own loopback on a one-node swarm, out of the container's reach.
      { source_labels: ['__meta_dockerswarm_network_name'], regex: `${s}_default`, action: 'keep' },
      // Discovery pairs that address with the service's published port (api<i>'s is
      // METABENCH_API_PORT + i); in the container the api listens on 8080.
      {
        source_labels: ['__address__'],
        regex: '(.+):[0-9]+',
        target_label: '__address__',
        replacement: '$1:8080',
      },
      { target_label: 'component', replacement: 'api' },
      // Replica i is service api<i>; replica 0 is service api.
      {
        source_labels: ['__meta_dockerswarm_service_name'],
        regex: `${s}_api`,
        target_label: 'replica',
        replacement: '0',
      },
      {
        source_labels: ['__meta_dockerswarm_service_name'],
        regex: `${s}_api([0-9]+)`,
        target_label: 'replica',
        replacement: '$1',
      },
      { source_labels: ['__meta_dockerswarm_task_id'], target_label: 'task' },
      { source_labels: ['__meta_dockerswarm_node_hostname'], target_label: 'node' },
    ],
  };
}

/** The job that scrapes the orchestrator's client metrics (prometheus/prometheus.yml names it so). */
export const CLIENT_JOB = 'metabench';

/**
 * Where the stack's Prometheus scrapes the orchestrator's client metrics when that is not
 * host.docker.internal (the Prometheus node itself): an address of the orchestrator's
 * machine that Prometheus's node reaches, and the bearer token it must show there.
 */
export interface ClientScrape {
  /** host:port */
  readonly address: string;
  readonly token: string;
}

/** The client job scraping `c.address` with its token (Prometheus's `authorization`, type Bearer). */
export function swarmClientJob(c: ClientScrape): Job {
  return {
    job_name: CLIENT_JOB,
    authorization: { type: 'Bearer', credentials: c.token },
    static_configs: [{ targets: [c.address], labels: { component: 'client' } }],
  };
}

/** The address and token of a generated configuration's client job, or undefined when it scrapes host.docker.internal unauthenticated. */
export function clientScrapeOf(configText: string): ClientScrape | undefined {
  const doc = parse(configText) as { scrape_configs?: Job[] } | null;
  const job = doc?.scrape_configs?.find((j) => j.job_name === CLIENT_JOB) as
    { authorization?: { credentials?: unknown }; static_configs?: { targets?: unknown[] }[] } | undefined;
  const token = job?.authorization?.credentials;
  const address = job?.static_configs?.[0]?.targets?.[0];
  return typeof token === 'string' && typeof address === 'string' ? { address, token } : undefined;
}

/**
 * prometheus/prometheus.yml (its text) for stack `stack`: the static api jobs replaced by
 * swarmApiJob, and with `client` the client job by swarmClientJob.
 */
export function swarmPrometheusConfig(
  stack: string,
  composeConfig: string,
  file = 'prometheus.yml',
  client?: ClientScrape,
): string {
  const doc = parse(composeConfig) as { scrape_configs?: unknown } | null;
  if (!doc || !Array.isArray(doc.scrape_configs))
    throw new BenchError('E_LAB_PREFLIGHT', `${file}: scrape_configs is not a list`);
  const jobs = (doc.scrape_configs as Job[])
    .filter((j) => !STATIC_API_JOBS.includes(String(j.job_name)))
    .map((j) => (client && j.job_name === CLIENT_JOB ? swarmClientJob(client) : j));
  const out = { ...doc, scrape_configs: [swarmApiJob(stack), ...jobs] };
  return `# Generated by metabench (orchestrator/lab/swarm/prometheusConfig.ts) from ${file} for stack ${stack}.\n${stringify(out)}`;
}
