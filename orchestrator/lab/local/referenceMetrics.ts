/**
 * PHP-FPM's status page (`pm.status_path?json`) as the bench's server-side series. FPM
 * counts a connection when a child accepts it ("accepted conn") and reports how many
 * children are serving one ("active processes") and how many connections wait in the
 * pool's listen socket ("listen queue", measured by the kernel on a TCP socket). So:
 *
 *   received  = accepted conn + listen queue   (reached the pool: served, serving or waiting)
 *   completed = accepted conn − active processes
 *   queue     = listen queue
 *   busy      = active processes
 *
 * `received` stays monotonic as a waiting connection is accepted (the queue falls by one
 * as accepted rises by one); a connection nginx gives up on while it waits leaves the
 * queue without being accepted, the one case where it could fall (never below the last
 * value here: the scraper counts increases only).
 */
export interface FpmStatus {
  readonly 'accepted conn': number;
  readonly 'listen queue': number;
  readonly 'active processes': number;
  readonly 'total processes': number;
  readonly 'listen queue len'?: number;
  readonly 'max children reached'?: number;
  readonly 'slow requests'?: number;
}

const FIELDS = ['accepted conn', 'listen queue', 'active processes', 'total processes'] as const;

/** The status page's JSON, checked: a clear error naming the missing field. */
export function parseFpmStatus(json: string): FpmStatus {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new Error(`php-fpm's status page is not JSON: ${json.slice(0, 80)}`);
  }
  const o = v as Record<string, unknown>;
  for (const f of FIELDS)
    if (typeof o?.[f] !== 'number') throw new Error(`php-fpm's status page has no "${f}" number`);
  return o as unknown as FpmStatus;
}

/** The status as Prometheus text, in the bench's series names plus FPM's own figures. */
export function fpmStatusAsPrometheus(s: FpmStatus): string {
  const accepted = s['accepted conn'];
  const queue = s['listen queue'];
  const active = s['active processes'];
  const lines = [
    `api_requests_received_total ${accepted + queue}`,
    `api_requests_completed_total ${Math.max(0, accepted - active)}`,
    `api_queue_depth ${queue}`,
    `api_busy_workers ${active}`,
    `phpfpm_accepted_connections_total ${accepted}`,
    `phpfpm_total_processes ${s['total processes']}`,
  ];
  if (s['listen queue len'] !== undefined) lines.push(`phpfpm_listen_queue_length ${s['listen queue len']}`);
  if (s['max children reached'] !== undefined)
    lines.push(`phpfpm_max_children_reached_total ${s['max children reached']}`);
  if (s['slow requests'] !== undefined) lines.push(`phpfpm_slow_requests_total ${s['slow requests']}`);
  return `${lines.join('\n')}\n`;
}
