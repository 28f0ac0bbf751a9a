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
  readonly Spec?: { readonly Labels?: Readonly<Record<string, string>> };
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
