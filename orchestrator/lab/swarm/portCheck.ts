import { connect } from 'node:net';
import { BenchError } from '../../../foundation/errors.js';
import { portTaken } from '../engine/ports.js';
import { replicaOfService } from '../engine/replicas.js';
import { nodeAddress, taskEndpoints, type SwarmNode, type SwarmService, type SwarmTask } from './tasks.js';

/**
 * Before `docker stack deploy`: each port the stack publishes must be free on every node its
 * service may land on. Swarm checks nothing of the kind: its task fails at the start
 * ("bind: address already in use") and, with the lab's restart policy `none`, stays failed.
 * On the node the orchestrator runs on (its engine is this machine's socket) the check binds
 * the port, as `lab up --runtime docker` does; on any other node it can only connect to the
 * port at the node's address, and says so.
 */

/** One port the stack file publishes in host mode, and the placement constraints of its service. */
export interface StackPort {
  readonly service: string;
  readonly port: number;
  readonly constraints: readonly string[];
}

type Doc = Record<string, unknown>;

/** The host ports the generated stack file publishes (ports the engine picks, without `published`, are left out). */
export function stackPorts(doc: Doc): StackPort[] {
  const out: StackPort[] = [];
  for (const [service, svc] of Object.entries((doc.services ?? {}) as Record<string, Doc>)) {
    const deploy = (svc.deploy ?? {}) as { placement?: { constraints?: string[] } };
    for (const p of (svc.ports ?? []) as { published?: number }[])
      if (typeof p.published === 'number' && p.published > 0)
        out.push({ service, port: p.published, constraints: deploy.placement?.constraints ?? [] });
  }
  return out;
}

/**
 * Whether a node meets one placement constraint (`node.role == manager`, `node.hostname != x`,
 * `node.id`, `node.labels.KEY`); undefined where this cannot tell (another attribute), so the
 * node is counted as one the service may land on.
 */
export function meetsConstraint(constraint: string, n: SwarmNode): boolean | undefined {
  const m = /^\s*([\w.-]+)\s*(==|!=)\s*(.*?)\s*$/.exec(constraint);
  if (!m) return undefined;
  const [, key, op, want] = m as unknown as [string, string, string, string];
  let have: string | undefined;
  if (key === 'node.role') have = n.Spec?.Role;
  else if (key === 'node.hostname') have = n.Description?.Hostname;
  else if (key === 'node.id') have = n.ID;
  else if (key.startsWith('node.labels.')) have = n.Spec?.Labels?.[key.slice('node.labels.'.length)] ?? '';
  else return undefined;
  if (have === undefined) return undefined;
  return (have === want) === (op === '==');
}

/** The nodes a service with these constraints may land on. */
export function nodesFor(constraints: readonly string[], nodes: readonly SwarmNode[]): SwarmNode[] {
  return nodes.filter(
    (n) => n.Status?.State !== 'down' && constraints.every((c) => meetsConstraint(c, n) !== false),
  );
}

/** The variable that moves a service's published port (api replica i publishes METABENCH_API_PORT + i). */
function portVariable(service: string): string {
  const base = replicaOfService(service) !== undefined ? 'api' : service;
  return `METABENCH_${base.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PORT`;
}

/** Whether something answers at address:port from here: the check for a node this machine is not. */
function answers(address: string, port: number, timeoutMs = 1000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = connect({ host: address, port });
    const done = (why: string | undefined): void => {
      s.destroy();
      resolve(why);
    };
    s.setTimeout(timeoutMs, () => done(undefined)); // no answer: nothing seen to listen there
    s.once('connect', () => done('something accepts connections there'));
    s.once('error', () => done(undefined));
  });
}

/**
 * Checks every published port of `doc` on every node its service may land on, but ports the
 * stack's own running tasks hold there (a redeploy keeps or replaces them). Throws
 * E_LAB_PREFLIGHT naming each clash's service, port, node and how it was checked; returns a
 * line per check otherwise (for the lab's log).
 */
export async function checkStackPorts(
  stack: string,
  doc: Doc,
  state: {
    readonly services: readonly SwarmService[];
    readonly tasks: readonly SwarmTask[];
    readonly nodes: readonly SwarmNode[];
  },
  /** The node the orchestrator runs on (its engine is this machine's), if any. */
  local: string | undefined,
): Promise<string[]> {
  const own = new Set<string>();
  for (const ep of taskEndpoints(stack, state.services, state.tasks, state.nodes).values())
    for (const a of Object.values(ep.ports)) own.add(`${ep.node} ${a.slice(a.lastIndexOf(':') + 1)}`);
  const clashes: string[] = [];
  const checked: string[] = [];
  for (const p of stackPorts(doc))
    for (const n of nodesFor(p.constraints, state.nodes)) {
      const host = n.Description?.Hostname ?? n.ID;
      if (own.has(`${n.ID} ${p.port}`)) {
        checked.push(`${p.service} port ${p.port} on ${host}: held by the stack's own task`);
        continue;
      }
      const here = n.ID === local;
      const address = here ? '0.0.0.0' : nodeAddress(n);
      const how = here
        ? `binding 0.0.0.0:${p.port} on this machine, node ${host}`
        : `connecting from this machine to ${address}:${p.port}, node ${host}'s address (a port taken on another interface of that node is not seen)`;
      const why = here ? await portTaken('0.0.0.0', p.port) : await answers(address, p.port);
      checked.push(`${p.service} port ${p.port} on ${host}: ${why ?? 'free'} (checked by ${how})`);
      if (why)
        clashes.push(
          `${p.service} publishes port ${p.port} on node ${host}, where it is taken (${why}; checked by ${how}): set ${portVariable(p.service)} to a free port`,
        );
    }
  if (clashes.length > 0)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `port clash in stack ${stack}: ${clashes.join('; ')}`,
      'set the variable in the environment or in the --env-file; `ss -ltnp` on the node shows who holds a port',
    );
  return checked;
}
