/**
 * The api link: the clients' path to the entry service through the fault proxy, so a link
 * toxic can sit between the load generator and the api (issue 35). `api` names the link to
 * every replica, `api[i]` the link to replica i (0-based, as target.ts's api[i]). The lab
 * puts it in the clients' path only when a trigger names it or lab.api.link asks for it:
 * a plain run keeps its direct path and timings.
 *
 * In the fault proxy the link of replica i is the proxy `api` (one replica) or `api-<i>`
 * (several): a Toxiproxy proxy name stays a plain path segment.
 */

/** The link's name as an experiment writes it. */
export const API_LINK = 'api';

const SHAPE = /^api(?:\[(0|[1-9][0-9]*)\])?$/;

/** What a link name says of the api link: undefined when it names another link; else its replica, if one. */
export function parseApiLink(link: string): { readonly replica?: number } | undefined {
  const m = SHAPE.exec(link);
  if (!m) return undefined;
  return m[1] === undefined ? {} : { replica: Number(m[1]) };
}

/** The fault proxy's name for the link to replica `i` in a lab of `replicas`. */
export function apiLinkProxy(i: number, replicas: number): string {
  return replicas === 1 ? API_LINK : `${API_LINK}-${i}`;
}

/** Whether a fault proxy's link is the api link's (to one replica). */
export function isApiLinkProxy(name: string): boolean {
  return /^api(?:-(0|[1-9][0-9]*))?$/.test(name);
}

/**
 * The fault proxy's links a trigger on `link` acts on: each replica's for `api`, the one for
 * `api[i]`, and the link itself for any other name. Throws RangeError for a replica the lab
 * does not run (the spec refuses it before a run).
 */
export function proxiesOfLink(link: string, replicas: number): string[] {
  const a = parseApiLink(link);
  if (!a) return [link];
  if (a.replica === undefined) return Array.from({ length: replicas }, (_, i) => apiLinkProxy(i, replicas));
  if (a.replica >= replicas)
    throw new RangeError(
      `link ${link} names the link to api replica ${a.replica}, but the lab runs ${replicas === 1 ? 'one api' : `${replicas} api replicas`}`,
    );
  return [apiLinkProxy(a.replica, replicas)];
}

/** Why `link: api[i]` names no link in a lab of `replicas`; undefined when it does (or is no api link). */
export function apiLinkOutOfRange(link: string, replicas: number): string | undefined {
  const a = parseApiLink(link);
  if (a?.replica === undefined || a.replica < replicas) return undefined;
  return replicas === 1
    ? `${link} names the link to api replica ${a.replica}, but the lab runs one api (lab.api.replicas is 1 or absent): write link: api, or set lab.api.replicas`
    : `${link} names the link to api replica ${a.replica}, but the lab runs ${replicas} api replicas: api[0] to api[${replicas - 1}]`;
}

/** Whether the experiment's clients go through the api link: a trigger names it, or lab.api.link says so. */
export function usesApiLink(
  api: { readonly link?: boolean | undefined },
  triggers: readonly object[],
): boolean {
  return (
    api.link ?? triggers.some((t) => 'link' in t && typeof t.link === 'string' && !!parseApiLink(t.link))
  );
}
