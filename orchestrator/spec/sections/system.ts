import { z } from 'zod';
import { int } from '../../../foundation/fields.js';
import { composeSystemProblems, readComposeServices, type ComposeFileServices } from '../composeFile.js';

/**
 * system: a system under test that metabench did not write, instead of the built-in `lab:`.
 * `url`: one already running; the load goes to the url, its health is a GET of `health`
 * (default: the url itself), and metabench can act on it only through the load and the
 * user's own commands (trigger kind `command`).
 */

/** An http URL, refused at parse time when it is not one (the transport speaks http: only). */
const httpUrl = z.string().refine(
  (s) => {
    try {
      return new URL(s).protocol === 'http:';
    } catch {
      return false;
    }
  },
  { message: 'must be an http:// URL, such as http://127.0.0.1:8080/work' },
);

/**
 * A Prometheus series: a metric name (its samples summed over their labels) or one series
 * written exactly as the endpoint writes it, `name{label="value"}`.
 */
const series = z
  .string()
  .regex(
    /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?$/,
    'a Prometheus metric name, or one series as name{label="value"}',
  );

/** A compose service's name (compose allows upper case, digits, ".", "_" and "-"). */
const serviceName = z
  .string()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/, 'a compose service name (letters, digits, ".", "_", "-")');

/** A URL path (health, load, metrics). */
const urlPath = z.string().regex(/^\/\S*$/, 'a path starting with /');

/**
 * Where the bench's server-side columns come from: a Prometheus text endpoint and, for each
 * column, the series that holds it. An unmapped column stays empty (docs/metrics.md). The
 * endpoint is a `url` on this machine, or (compose) a service of the file, the port it
 * listens on inside its container and a path: metabench publishes that port on 127.0.0.1.
 */
export const systemMetrics = z.strictObject({
  /** The Prometheus text endpoint (http://host:port/metrics). */
  url: httpUrl.optional(),
  /** compose: the service that serves the endpoint, on the compose network. */
  service: serviceName.optional(),
  /** compose: the port it serves it on inside its container. */
  port: int(1, 65535).optional(),
  /** compose: the endpoint's path (default /metrics). */
  path: urlPath.optional(),
  /** A counter of the requests the system received (server-side amplification A_s needs it). */
  received: series.optional(),
  /** A counter of the requests it completed, any status. */
  completed: series.optional(),
  /** A gauge of the requests waiting for a worker (the backlog). */
  queue: series.optional(),
  /** A gauge of the busy workers. */
  busy: series.optional(),
});

/** A component's or link's name: what triggers name (target:, link:). */
const componentName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,39}$/, 'use lower-case letters, digits, "_" and "-", starting with a letter');

/** One component of a system metabench starts (system.processes[]). */
const systemProcess = z.strictObject({
  name: componentName,
  /** A shell command (run by `sh -c`) that starts the component and keeps running. */
  command: z.string().regex(/\S/, 'give the command that starts the component').max(4000),
  /** Where the command runs (default: the directory metabench was started in). */
  cwd: z.string().min(1).optional(),
  /** Environment variables it gets, beside metabench's own. */
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string())
    .optional(),
  /** The port it listens on, on 127.0.0.1 (its health URL and its links' upstream). */
  port: int(1, 65535),
  /** A path on that port that answers 2xx once it is up. */
  health: z.string().regex(/^\/\S*$/, 'a path starting with /'),
});

/** A dependency: `from` reaches `to` at the address in the environment variable `env` (host:port). */
const systemLink = z.strictObject({
  /** The link's name, what link toxics name (default: `to`). */
  name: componentName.optional(),
  from: componentName,
  to: componentName,
  env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
});

/** A dependency of a compose system: `from` reaches `service:port` at the address in its variable `env`. */
const composeLink = z.strictObject({
  /** The link's name, what link toxics name (default: `service`). */
  name: componentName.optional(),
  /** The dependency's service and the port it listens on inside the compose network. */
  service: serviceName,
  port: int(1, 65535),
  /** The dependent's environment variable that holds the dependency's address (it must name service:port). */
  env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
  /** The dependent service. */
  from: serviceName,
});

/**
 * Your own compose file, run by metabench on the Docker runtime with an override that puts each
 * link behind the fault proxy (lab/engine/composeSystem.ts). The file is read relative to the
 * directory metabench runs in.
 */
const systemCompose = z.strictObject({
  file: z.string().min(1),
  /** The compose project (default: metabench-system; never the built-in lab's). */
  project: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a compose project name (lower-case letters, digits, "_", "-")')
    // The built-in lab's project (lab/engine/compose.ts DEFAULT_PROJECT): this system's down would
    // remove every container of that project, the built-in lab's among them.
    .refine((p) => p !== 'metabench', {
      message:
        "is the built-in lab's compose project, which this system's teardown would remove: name another (default metabench-system)",
    })
    .optional(),
  /** The service the load goes to, the port it listens on in its container, and the path that answers 2xx once it is up. */
  entry: z.strictObject({
    service: serviceName,
    port: int(1, 65535),
    health: z
      .string()
      .regex(/^\/\S*$/, 'a path starting with /')
      .optional(),
  }),
  /** The path the load asks the entry for (a mix class's path replaces it; default /). */
  path: z
    .string()
    .regex(/^\/\S*$/, 'a path starting with /')
    .optional(),
  links: z.array(composeLink).max(50).default([]),
});

export const system = z
  .strictObject({
    /** … or your own compose file, on the Docker runtime. */
    compose: systemCompose.optional(),
    /** A system already running: the load goes to this http URL with its path. */
    url: httpUrl.optional(),
    /** The URL that answers 2xx when the system is up (url only; default: `url`). */
    health: httpUrl.optional(),
    /** … or components metabench starts on this machine, each a process. */
    processes: z.array(systemProcess).min(1).max(20).optional(),
    /** processes: the component the load goes to. */
    entry: componentName.optional(),
    /** processes: the path the load asks the entry for (a mix class's path replaces it). */
    path: z
      .string()
      .regex(/^\/\S*$/, 'a path starting with /')
      .optional(),
    /** processes: the dependencies, each through metabench's fault proxy. */
    links: z.array(systemLink).max(50).optional(),
    metrics: systemMetrics.optional(),
  })
  .superRefine((s, ctx) => {
    const issue = (path: (string | number)[], message: string): void =>
      ctx.addIssue({ code: 'custom', path, message });
    if (s.metrics)
      for (const p of metricsEndpointIssues(s.metrics, s.compose !== undefined)) issue(p.path, p.message);
    if (s.compose !== undefined) {
      for (const k of ['url', 'health', 'processes', 'entry', 'path', 'links'] as const)
        if (s[k] !== undefined)
          issue(
            [k],
            `${k} does not go with compose: a compose system names its entry, path and links under system.compose`,
          );
      for (const p of composeIssues(s.compose, s.metrics)) issue(p.path, p.message);
      return;
    }
    if ((s.url === undefined) === (s.processes === undefined)) {
      issue(
        s.url === undefined ? [] : ['processes'],
        s.url === undefined
          ? 'a system is given by its url (one already running), by its processes (metabench starts them) or by its compose file (compose)'
          : 'give either url (a system already running) or processes (metabench starts them), not both',
      );
      return;
    }
    if (s.url !== undefined) {
      for (const k of ['entry', 'path', 'links'] as const)
        if (s[k] !== undefined)
          issue([k], `${k} goes with processes: a system given by its url is reached there`);
      return;
    }
    const procs = s.processes!;
    if (s.health !== undefined)
      issue(['health'], 'health goes with url: each process has its own health path');
    const names = procs.map((p) => p.name);
    procs.forEach((p, i) => {
      if (names.indexOf(p.name) !== i) issue(['processes', i, 'name'], `"${p.name}" is used twice`);
      const j = procs.findIndex((q) => q.port === p.port);
      if (j !== i) issue(['processes', i, 'port'], `port ${p.port} is also ${procs[j]!.name}'s`);
    });
    const known = (n: string) => names.includes(n) || false;
    const declared = `declared: ${names.join(', ')}`;
    if (s.entry === undefined) issue(['entry'], `name the component the load goes to (${declared})`);
    else if (!known(s.entry)) issue(['entry'], `no process "${s.entry}" in system.processes (${declared})`);
    const linkNames: string[] = [];
    (s.links ?? []).forEach((l, i) => {
      for (const k of ['from', 'to'] as const)
        if (!known(l[k])) issue(['links', i, k], `no process "${l[k]}" in system.processes (${declared})`);
      if (l.from === l.to) issue(['links', i, 'to'], 'a component does not depend on itself');
      const name = l.name ?? l.to;
      if (linkNames.includes(name))
        issue(['links', i, l.name ? 'name' : 'to'], `two links are named "${name}": give each its own name`);
      linkNames.push(name);
    });
    const cycle = dependencyCycle(s.links ?? []);
    if (cycle)
      issue(
        ['links'],
        `the links make a cycle (${cycle.join(' -> ')}): metabench starts a dependency before what needs it`,
      );
  });

type Issue = { path: (string | number)[]; message: string };

/**
 * Where the metrics endpoint is: a url, or, for a compose system, a service and port of the
 * file instead (metabench publishes that port; a url there is one the file publishes itself).
 */
function metricsEndpointIssues(m: SystemMetrics, compose: boolean): Issue[] {
  const out: Issue[] = [];
  const at = (k: string): (string | number)[] => ['metrics', k];
  if (!compose) {
    if (m.url === undefined)
      out.push({ path: at('url'), message: 'give the Prometheus text endpoint, http://host:port/metrics' });
    for (const k of ['service', 'port', 'path'] as const)
      if (m[k] !== undefined)
        out.push({
          path: at(k),
          message: `${k} goes with compose: a system given by its url or processes names its endpoint by url`,
        });
    return out;
  }
  if (m.url !== undefined) {
    for (const k of ['service', 'port', 'path'] as const)
      if (m[k] !== undefined)
        out.push({ path: at(k), message: `give either url or service and port, not both` });
  } else if (m.service === undefined)
    out.push({
      path: ['metrics'],
      message:
        'give the endpoint: service and port (a service of your compose file, the port inside its container), or url',
    });
  else if (m.port === undefined)
    out.push({
      path: at('port'),
      message: `the port ${m.service} serves its metrics on inside its container`,
    });
  return out;
}

/** What is wrong with a compose system against its file: the file missing or unreadable, or what composeSystemProblems finds. */
function composeIssues(c: SystemCompose, metrics: SystemMetrics | undefined): Issue[] {
  let file: ComposeFileServices;
  try {
    file = readComposeServices(c.file);
  } catch (err) {
    return [{ path: ['compose', 'file'], message: (err as Error).message }];
  }
  const shape = {
    entry: c.entry,
    links: c.links.map(composeLinkOf),
    metrics: composeMetricsEndpoint(metrics),
  };
  return composeSystemProblems(shape, file).map((p) => ({
    path: [...p.path],
    message: `${p.message} (in ${c.file})`,
  }));
}

/** A compose system's metrics endpoint on the compose network (service, port, path); undefined when it is a url or none. */
export function composeMetricsEndpoint(
  m: SystemMetrics | undefined,
): { service: string; port: number; path: string } | undefined {
  if (!m || m.url !== undefined || m.service === undefined || m.port === undefined) return undefined;
  return { service: m.service, port: m.port, path: m.path ?? '/metrics' };
}

/** A compose link with its name resolved (default: the dependency's service). */
export function composeLinkOf(l: SystemCompose['links'][number]): {
  name: string;
  service: string;
  port: number;
  env: string;
  from: string;
} {
  return { name: l.name ?? l.service, service: l.service, port: l.port, env: l.env, from: l.from };
}

/** A cycle among the links (from depends on to), as the names along it; undefined when there is none. */
function dependencyCycle(links: readonly { from: string; to: string }[]): string[] | undefined {
  const next = (n: string) => links.filter((l) => l.from === n).map((l) => l.to);
  const visit = (n: string, path: string[]): string[] | undefined => {
    const at = path.indexOf(n);
    if (at >= 0) return [...path.slice(at), n];
    for (const m of next(n)) {
      const c = visit(m, [...path, n]);
      if (c) return c;
    }
    return undefined;
  };
  for (const l of links) {
    const c = visit(l.from, []);
    if (c) return c;
  }
  return undefined;
}

/** A link's name (what a link toxic names): its own, or the component it reaches. */
export function linkName(l: { readonly name?: string | undefined; readonly to: string }): string {
  return l.name ?? l.to;
}

/** The components a system names (its processes'), none for a system given by its url. */
export function systemComponents(s: SystemSection): string[] {
  if (s.compose) {
    // The services of the file (validation has read it; unreadable later: none).
    try {
      return Object.keys(readComposeServices(s.compose.file).services);
    } catch {
      return [];
    }
  }
  return (s.processes ?? []).map((p) => p.name);
}

/** The links a system declares, by name. */
export function systemLinks(s: SystemSection): string[] {
  if (s.compose) return s.compose.links.map((l) => composeLinkOf(l).name);
  return (s.links ?? []).map(linkName);
}

/** Where the load goes: the url, or the entry component's port and path on 127.0.0.1. */
export function systemUrl(s: SystemSection): string {
  if (s.url !== undefined) return s.url;
  // A compose entry is published on a free loopback port when it comes up: its address on the compose network.
  if (s.compose) return `http://${s.compose.entry.service}:${s.compose.entry.port}${s.compose.path ?? '/'}`;
  const entry = s.processes!.find((p) => p.name === s.entry)!;
  return `http://127.0.0.1:${entry.port}${s.path ?? '/'}`;
}

export type SystemSection = z.output<typeof system>;
export type SystemMetrics = z.output<typeof systemMetrics>;
export type SystemCompose = z.output<typeof systemCompose>;

/** The bench's server-side columns a metrics mapping can fill, by the mapping's field. */
export const MAPPED_COLUMNS = {
  received: 'received',
  completed: 'completed',
  queue: 'queueDepth',
  busy: 'busyWorkers',
} as const;

/** The system in one line, for reports: where the load went and where its server-side figures came from. */
export function describeSystem(s: SystemSection): string {
  const health = s.health !== undefined && s.health !== s.url ? ` (health ${s.health})` : '';
  const started = s.compose
    ? ` (compose file ${s.compose.file}, run by metabench on the Docker runtime${
        s.compose.links.length
          ? `; links ${s.compose.links.map((l) => `${l.from} -> ${l.service}`).join(', ')}, each through the fault proxy`
          : ''
      })`
    : s.processes
      ? ` (started by metabench: ${s.processes.map((p) => `${p.name} on port ${p.port}`).join(', ')}${
          s.links?.length
            ? `; links ${s.links.map((l) => `${l.from} -> ${l.to}`).join(', ')}, each through the fault proxy`
            : ''
        })`
      : '';
  const m = s.metrics;
  const mapped = m
    ? (Object.keys(MAPPED_COLUMNS) as (keyof typeof MAPPED_COLUMNS)[]).filter((k) => m[k] !== undefined)
    : [];
  return `your own system at ${systemUrl(s)}${health}${started}; ${
    m
      ? `server metrics from ${metricsWhere(m)} (${mapped.length ? mapped.map((k) => `${k} = ${m[k]}`).join(', ') : 'no series mapped'})`
      : 'no server metrics (amplification measured at the client only)'
  }`;
}

/** Where a system's metrics endpoint is, in words: its url, or a compose service's port and path. */
function metricsWhere(m: SystemMetrics): string {
  const c = composeMetricsEndpoint(m);
  return c ? `${c.path} on port ${c.port} of service ${c.service}` : String(m.url);
}
