import type { Mitigations } from '../../services/api/server.js';
import type { Experiment } from '../spec/schema.js';

/** The api's mitigations as the experiment declares them (lab.api), in the api's terms. */
export function apiMitigations(api: Experiment['lab']['api']): Mitigations {
  const shed = api.shed;
  return {
    queue: api.queue,
    ...(api.queueLimit !== undefined ? { queueBound: api.queueLimit } : {}),
    ...(api.concurrencyLimit !== undefined ? { concurrencyLimit: api.concurrencyLimit } : {}),
    ...(shed?.policy === 'queue-time' ? { shedQueueTimeMs: shed.limit } : {}),
    ...(shed?.policy === 'codel' ? { codel: { targetMs: shed.target, intervalMs: shed.interval } } : {}),
    ...(api.deadlineDrop ? { deadlineDrop: true } : {}),
  };
}
