import type { SwarmNode, SwarmService, SwarmTask } from './tasks.js';

/**
 * Changes to the stack's tasks that the run did not ask for, found by comparing the engine's
 * task lists one poll after another: swarm replacing a task (a new task id for a service: a
 * `docker service update`, a node gone, a rescheduling) and a task leaving `running` while
 * no trigger of the run acts on its service (a crash, an out-of-memory kill, a shutdown
 * someone else asked for). The lab deploys one task per service with the restart policy
 * `none`, so every such change is news: a replica the generator no longer reaches, or one
 * it reaches but whose state the run's figures do not explain. Pure: the polling is
 * SwarmLab's.
 */

/** One line of events.ndjson(.gz): `e: 'swarm-task'`. */
export interface TaskChange {
  readonly e: 'swarm-task';
  /** `new`: a task swarm created for the service; `left-running`: a task that was running no longer is. */
  readonly change: 'new' | 'left-running';
  /** The service's name in the stack file (`api1`, `prometheus`). */
  readonly service: string;
  readonly task: string;
  /** The task's state now (`running`, `shutdown`, `failed`…, or `gone` once the engine lists it no more). */
  readonly state: string;
  /** What swarm wants of it (`running`, `shutdown`): `shutdown` means swarm (or whoever updated the service) stopped it. */
  readonly desired: string;
  readonly node?: string;
  /** The engine's message for a failed task. */
  readonly error?: string;
  /** `new`: the task it replaces, the service's previous one. */
  readonly replaces?: string;
  /** When the engine says the state changed (RFC 3339); the poll that saw it is atMs. */
  readonly engineAt?: string;
  /** When the poll saw the change, on the run's clock (ms). */
  readonly atMs: number;
}

interface Seen {
  readonly service: string;
  readonly state: string;
  readonly desired: string;
}

/** The stack's tasks from one poll: the engine's lists, as SwarmLab's swarmState reads them. */
export interface TaskList {
  readonly services: readonly SwarmService[];
  readonly tasks: readonly SwarmTask[];
  readonly nodes: readonly SwarmNode[];
}

export class TaskWatch {
  /** The last poll's tasks of the stack, by id. */
  private seen: Map<string, Seen> | undefined;
  /** Tasks the lab counts as its own: desired running at some poll since the watch began. */
  private readonly intended = new Set<string>();

  constructor(private readonly stack: string) {}

  /**
   * The changes since the previous poll (none at the first, which is the baseline).
   * `ours(service)` says a trigger of the run acted on the service's container since the
   * previous poll (a kill or a stop): its task leaving `running` is the trigger's doing.
   */
  step(list: TaskList, atMs: number, ours: (service: string) => boolean): TaskChange[] {
    const nameOf = new Map(list.services.map((s) => [s.ID, s.Spec.Name]));
    const hostOf = new Map(list.nodes.map((n) => [n.ID, n.Description?.Hostname ?? n.ID]));
    const now = new Map<string, Seen>();
    const byId = new Map<string, SwarmTask>();
    for (const t of list.tasks) {
      const full = nameOf.get(t.ServiceID);
      if (!full?.startsWith(`${this.stack}_`)) continue;
      now.set(t.ID, {
        service: full.slice(this.stack.length + 1),
        state: t.Status.State,
        desired: t.DesiredState,
      });
      byId.set(t.ID, t);
    }
    const before = this.seen;
    this.seen = now;
    const changes: TaskChange[] = [];
    if (before) {
      const describe = (id: string, s: Seen): Omit<TaskChange, 'change'> => {
        const t = byId.get(id);
        const node = t?.NodeID ? hostOf.get(t.NodeID) : undefined;
        return {
          e: 'swarm-task',
          service: s.service,
          task: id,
          state: s.state,
          desired: s.desired,
          ...(node ? { node } : {}),
          ...(t?.Status.Err ? { error: t.Status.Err } : {}),
          ...(t?.Status.Timestamp ? { engineAt: t.Status.Timestamp } : {}),
          atMs,
        };
      };
      for (const [id, was] of before) {
        if (!this.intended.has(id) || was.state !== 'running') continue;
        const is = now.get(id) ?? { ...was, state: 'gone' };
        if (is.state === 'running' || ours(was.service)) continue;
        changes.push({ ...describe(id, is), change: 'left-running' });
      }
      for (const [id, is] of now) {
        if (before.has(id)) continue;
        // The task it replaces: the service's task of the lab's that ran (or was meant to) until now.
        const previous = [...before].find(
          ([pid, s]) =>
            s.service === is.service &&
            this.intended.has(pid) &&
            (s.state === 'running' || s.desired === 'running'),
        )?.[0];
        changes.push({ ...describe(id, is), change: 'new', ...(previous ? { replaces: previous } : {}) });
      }
    }
    for (const [id, s] of now) if (s.desired === 'running') this.intended.add(id);
    return changes;
  }
}
