/**
 * What a process trigger acts on, in one home: a component, or one replica of the api
 * (`api[1]`, 0-based; lab.api.replicas). `api` names every replica. The spec parses a
 * trigger's `target:` with it, the labs resolve it to their processes, and the journal's
 * recipes and the run's events carry it as written.
 */

/** A part of the lab that a trigger can act on. */
export const COMPONENTS = ['api', 'redis', 'postgres', 'llm'] as const;
export type Component = (typeof COMPONENTS)[number];

/** The most api replicas a lab runs (lab.api.replicas). */
export const MAX_REPLICAS = 16;

/** A whole component, or one api replica. */
export type Target = Component | `api[${number}]`;

export interface ParsedTarget {
  readonly component: Component;
  /** The one replica named; absent: the whole component (every replica of the api). */
  readonly replica?: number;
}

const SHAPE = /^([a-z]+)(?:\[(0|[1-9][0-9]*)\])?$/;

/**
 * The target `s` names, or why it names none (a component without replicas given an
 * index, an unknown component, a malformed index). The replica's range is the lab's to
 * check (replicaOutOfRange).
 */
export function parseTarget(s: string): ParsedTarget | { readonly error: string } {
  const m = SHAPE.exec(s);
  const name = m?.[1];
  if (!m || !(COMPONENTS as readonly string[]).includes(name!))
    return {
      error: `"${s}" is not a target: use one of ${COMPONENTS.join(', ')}, or api[i] for one api replica (0-based)`,
    };
  const component = name as Component;
  if (m[2] === undefined) return { component };
  if (component !== 'api')
    return {
      error: `${component} has no replicas: only the api runs several (lab.api.replicas), so ${component}[${m[2]}] names nothing; write target: ${component}`,
    };
  return { component, replica: Number(m[2]) };
}

/** Why a replica target does not exist in a lab of `replicas` api replicas; undefined when it does. */
export function replicaOutOfRange(t: ParsedTarget, replicas: number): string | undefined {
  if (t.replica === undefined || t.replica < replicas) return undefined;
  return replicas === 1
    ? `api[${t.replica}] names replica ${t.replica}, but the lab runs one api (lab.api.replicas is 1 or absent): write target: api, or set lab.api.replicas`
    : `api[${t.replica}] names replica ${t.replica}, but the lab runs ${replicas} api replicas, api[0] to api[${replicas - 1}]`;
}

/** `s` as a target; throws on what the spec would have refused (a lab's caller passes only parsed targets). */
export function targetOf(s: Target): ParsedTarget {
  const t = parseTarget(s);
  if ('error' in t) throw new RangeError(t.error);
  return t;
}

export function formatTarget(t: ParsedTarget): Target {
  return t.replica === undefined ? t.component : `api[${t.replica}]`;
}

/** The replica indices a target on the api acts on, in a lab of `replicas`: its one, or all. */
export function replicaIndices(t: ParsedTarget, replicas: number): number[] {
  if (t.replica !== undefined) {
    const why = replicaOutOfRange(t, replicas);
    if (why) throw new RangeError(why);
    return [t.replica];
  }
  return Array.from({ length: replicas }, (_, i) => i);
}
