import { BenchError } from '../../../foundation/errors.js';
import type { EngineAddress } from '../dockerData.js';
import { engineAddress } from '../engine/engine.js';

/**
 * Task discovery: where each service of the stack runs. Without the routing mesh (dnsrr
 * services publish in host mode) a service answers only at the address of the node that runs
 * its task, on the port the task publishes there; the engine's task and node lists say both.
 * The container is acted on (pause, kill…) through that node's engine.
 */

/** The fields of the Engine API's task, node and service objects this reads. */
export interface SwarmTask {
  readonly ID: string;
  readonly ServiceID: string;
  readonly NodeID?: string;
  readonly DesiredState: string;
  readonly Slot?: number;
  readonly CreatedAt?: string;
  readonly Status: {
    readonly State: string;
    readonly Err?: string;
    /** When the task's state last changed, as the engine says (RFC 3339). */
    readonly Timestamp?: string;
    readonly ContainerStatus?: { readonly ContainerID?: string };
    readonly PortStatus?: {
      readonly Ports?: readonly {
        readonly Protocol?: string;
        readonly TargetPort?: number;
        readonly PublishedPort?: number;
        readonly PublishMode?: string;
      }[];
    };
  };
}

export interface SwarmNode {
  readonly ID: string;
  readonly Description?: { readonly Hostname?: string };
  readonly Status?: { readonly Addr?: string; readonly State?: string };
  readonly ManagerStatus?: { readonly Addr?: string };
  readonly Spec?: { readonly Role?: string; readonly Labels?: Readonly<Record<string, string>> };
}

export interface SwarmService {
  readonly ID: string;
  readonly Spec: { readonly Name: string };
}

/** The node label that says how to reach a node's Docker API (ssh://user@host, tcp://host:2376). */
export const ENGINE_LABEL = 'metabench.engine';

/** Where one service of the stack runs now. */
export interface TaskEndpoint {
  /** The service's name in the stack file (`api1`, not `metabench_api1`). */
  readonly service: string;
  readonly task: string;
  readonly container: string;
  readonly node: string;
  readonly hostname: string;
  /** The node's address, as the swarm knows it. */
  readonly address: string;
  /** Container port ("8080/tcp") → "address:published port", for ports published in host mode. */
  readonly ports: Readonly<Record<string, string>>;
}

/** A node's address: Status.Addr, or its manager address's host where the engine reports 0.0.0.0 (some managers do). */
export function nodeAddress(n: SwarmNode): string {
  const addr = n.Status?.Addr;
  if (addr && addr !== '0.0.0.0') return addr;
  const m = n.ManagerStatus?.Addr;
  if (m) return m.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  throw new BenchError('E_LAB', `swarm node ${n.Description?.Hostname ?? n.ID} reports no address`);
}

/**
 * The running task of each service of `stack`: the one whose desired and current states are
 * both `running` (a rolling update's old task is desired `shutdown`). A service without one
 * is absent from the result; two running tasks of one service (the lab deploys one each)
 * is an error.
 */
export function taskEndpoints(
  stack: string,
  services: readonly SwarmService[],
  tasks: readonly SwarmTask[],
  nodes: readonly SwarmNode[],
): Map<string, TaskEndpoint> {
  const nameOf = new Map(services.map((s) => [s.ID, s.Spec.Name]));
  const nodeOf = new Map(nodes.map((n) => [n.ID, n]));
  const out = new Map<string, TaskEndpoint>();
  for (const t of tasks) {
    const full = nameOf.get(t.ServiceID);
    if (!full || !full.startsWith(`${stack}_`)) continue;
    if (t.DesiredState !== 'running' || t.Status.State !== 'running') continue;
    const container = t.Status.ContainerStatus?.ContainerID;
    const node = t.NodeID ? nodeOf.get(t.NodeID) : undefined;
    if (!container || !node) continue;
    const service = full.slice(stack.length + 1);
    if (out.has(service))
      throw new BenchError(
        'E_LAB',
        `service ${full} runs two tasks (${out.get(service)!.task}, ${t.ID}): the lab deploys one per service`,
      );
    const address = nodeAddress(node);
    const ports: Record<string, string> = {};
    for (const p of t.Status.PortStatus?.Ports ?? [])
      if (p.PublishMode === 'host' && p.TargetPort && p.PublishedPort)
        ports[`${p.TargetPort}/${p.Protocol ?? 'tcp'}`] = `${address}:${p.PublishedPort}`;
    out.set(service, {
      service,
      task: t.ID,
      container,
      node: node.ID,
      hostname: node.Description?.Hostname ?? node.ID,
      address,
      ports,
    });
  }
  return out;
}

/**
 * The engine that runs a node's containers: the orchestrator's own engine for the node it
 * is (a one-node swarm, or the manager), else the node's `metabench.engine` label.
 */
export function nodeEngine(node: SwarmNode, self: string, own: EngineAddress): EngineAddress {
  if (node.ID === self) return own;
  const label = node.Spec?.Labels?.[ENGINE_LABEL];
  if (!label)
    throw new BenchError(
      'E_LAB',
      `swarm node ${node.Description?.Hostname ?? node.ID} runs a task of the lab but has no ${ENGINE_LABEL} label saying how to reach its Docker API`,
      `docker node update --label-add ${ENGINE_LABEL}=ssh://USER@HOST ${node.Description?.Hostname ?? node.ID}`,
    );
  return engineAddress({ DOCKER_HOST: label });
}

/**
 * The images the engine said it does not have for the `wanted` services' tasks (a task
 * rejected with "No such image: IMAGE"), as `service: image`. No node can start those tasks
 * until the image is built or loaded there, so waiting for them is pointless: the lab says so
 * at once instead of after its start timeout.
 */
export function missingImages(
  stack: string,
  services: readonly SwarmService[],
  tasks: readonly SwarmTask[],
  wanted: ReadonlySet<string>,
): string[] {
  const nameOf = new Map(services.map((s) => [s.ID, s.Spec.Name.slice(stack.length + 1)]));
  const missing = new Set<string>();
  for (const t of tasks) {
    const service = nameOf.get(t.ServiceID);
    const image = /No such image: (\S+)/.exec(t.Status.Err ?? '')?.[1];
    if (t.Status.State === 'rejected' && service !== undefined && wanted.has(service) && image)
      missing.add(`${service}: ${image}`);
  }
  return [...missing].sort();
}

/** A task of the stack that failed or was rejected: why a service does not come up. */
export interface TaskFailure {
  readonly service: string;
  readonly task: string;
  readonly state: string;
  /** The node's hostname (or id), when the task was given one. */
  readonly node?: string;
  /** The engine's error. */
  readonly error: string;
}

/**
 * The `wanted` services' tasks that failed or were rejected since a deploy, oldest first:
 * tasks not in `before` (the task ids the stack had just before it). The lab's restart policy
 * is `none`, so such a task is never retried: waiting on for its service is pointless.
 * (A task an earlier run's trigger killed is in `before`: not the deploy's doing.)
 */
export function deployFailures(
  stack: string,
  list: {
    readonly services: readonly SwarmService[];
    readonly tasks: readonly SwarmTask[];
    readonly nodes: readonly SwarmNode[];
  },
  before: ReadonlySet<string>,
  wanted: ReadonlySet<string>,
): TaskFailure[] {
  const nameOf = new Map(list.services.map((s) => [s.ID, s.Spec.Name.slice(stack.length + 1)]));
  const hostOf = new Map(list.nodes.map((n) => [n.ID, n.Description?.Hostname ?? n.ID]));
  return list.tasks
    .filter((t) => !before.has(t.ID) && (t.Status.State === 'failed' || t.Status.State === 'rejected'))
    .flatMap((t) => {
      const service = nameOf.get(t.ServiceID);
      if (service === undefined || !wanted.has(service)) return [];
      const node = t.NodeID ? hostOf.get(t.NodeID) : undefined;
      return [
        {
          service,
          task: t.ID,
          state: t.Status.State,
          ...(node ? { node } : {}),
          error: t.Status.Err ?? 'no message',
        },
      ];
    })
    .sort((a, b) => a.task.localeCompare(b.task));
}

/** One failure as a sentence: service, node, state and the engine's words. */
export function describeFailure(f: TaskFailure): string {
  return `${f.service}'s task ${f.task} ${f.state}${f.node ? ` on node ${f.node}` : ''}: ${f.error}`;
}

/** The label the engine gives a swarm task's container: its task's id. */
export const TASK_ID_LABEL = 'com.docker.swarm.task.id';

/**
 * The stack's containers whose task swarm no longer runs: a trigger killed or stopped the
 * container, and a start (the trigger's, `lab reset`'s) brought it back through the engine,
 * where swarm does not see it (restart policy `none`: its task stays `failed` or
 * `complete`). Such a container keeps its host port, so the next task of its service could
 * not start ("port is already allocated"), and swarm's DNS no longer names it.
 */
export function orphanContainers<
  C extends {
    readonly Id: string;
    readonly State?: string;
    readonly Labels?: Readonly<Record<string, string>>;
  },
>(tasks: readonly SwarmTask[], containers: readonly C[]): C[] {
  const stateOf = new Map(tasks.map((t) => [t.ID, t.Status.State]));
  return containers.filter((c) => {
    const task = c.Labels?.[TASK_ID_LABEL];
    if (task === undefined || !['running', 'paused', 'restarting'].includes(c.State ?? '')) return false;
    const state = stateOf.get(task);
    return state === undefined || TERMINAL.has(state);
  });
}

/** Task states swarm never leaves: the task is done with, whatever its container does. */
const TERMINAL = new Set(['complete', 'failed', 'shutdown', 'rejected', 'orphaned', 'remove']);
