/**
 * PHP-FPM behind nginx as the bench's server-side series, from nginx's stub_status and
 * FPM's status page (`pm.status_path?json`):
 *
 *   received  = nginx's requests − the status requests metabench made itself
 *               (counted when nginx reads a request: exact, and at arrival)
 *   completed = FPM's accepted conn − active processes (a child counts a request when it
 *               takes it, and is active until it has answered)
 *   queue     = FPM's listen queue (connections waiting in the pool's TCP backlog)
 *   busy      = FPM's active processes
 *
 * FPM's master samples the listen queue from the kernel about once a second, so the
 * queue gauge lags by up to a second; received + queue would therefore overcount (measured:
 * 994 and 1017 for 960 requests), which is why received is nginx's.
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

/** nginx's stub_status page: its requests counter (every request nginx has read). */
export function parseNginxRequests(text: string): number {
  // "Active connections: N\nserver accepts handled requests\n A H R\nReading: ..."
  const m = /server accepts handled requests\s+(\d+)\s+(\d+)\s+(\d+)/.exec(text);
  if (!m) throw new Error(`nginx's stub_status page is not as expected: ${text.slice(0, 80)}`);
  return Number(m[3]);
}

/**
 * The statuses as Prometheus text, in the bench's series names plus FPM's own figures;
 * `received` is nginx's requests less the status requests metabench made.
 */
export function fpmStatusAsPrometheus(s: FpmStatus, received: number): string {
  const accepted = s['accepted conn'];
  const queue = s['listen queue'];
  const active = s['active processes'];
  const lines = [
    `api_requests_received_total ${received}`,
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
