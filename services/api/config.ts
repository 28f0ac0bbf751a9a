import type { DurationDist } from '../../foundation/distributions.js';
import type { Mitigations } from './server.js';

/**
 * Parses a work distribution flag: `constant:20ms`, `exponential:20ms`,
 * `lognormal:20ms:0.5` (mean, then sigma in log space).
 */
export function parseDurationDist(s: string): DurationDist {
  const [dist, mean, sigma] = s.split(':');
  const meanMs = Number(String(mean).replace(/ms$/, ''));
  if (!(meanMs > 0)) throw new Error(`--work: mean must be a positive number of ms (got "${s}")`);
  if (dist === 'constant' || dist === 'exponential') return { dist, meanMs };
  if (dist === 'lognormal') {
    const sg = Number(sigma);
    if (!(sg > 0)) throw new Error(`--work: lognormal needs a sigma > 0 (got "${s}")`);
    return { dist, meanMs, sigma: sg };
  }
  throw new Error(`--work: unknown distribution "${dist}" (constant, exponential, lognormal)`);
}

export function formatDurationDist(d: DurationDist): string {
  return d.dist === 'lognormal' ? `lognormal:${d.meanMs}ms:${d.sigma}` : `${d.dist}:${d.meanMs}ms`;
}

function positiveNumber(flag: string, v: string, integer: boolean): number {
  const n = Number(v);
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    throw new Error(`--${flag}: expected a positive ${integer ? 'whole ' : ''}number (got "${v}")`);
  return n;
}

/** The api's mitigation flags (see main.ts); each is off unless given. */
export function parseMitigations(v: {
  queue?: string | undefined;
  'queue-bound'?: string | undefined;
  'concurrency-limit'?: string | undefined;
  'shed-queue-time'?: string | undefined;
  codel?: string | undefined;
  'deadline-drop'?: boolean | undefined;
}): Mitigations {
  const queue = v.queue ?? 'fifo';
  if (queue !== 'fifo' && queue !== 'lifo') throw new Error(`--queue: fifo or lifo (got "${queue}")`);
  let codel: Mitigations['codel'];
  if (v.codel !== undefined) {
    const [target, interval] = v.codel.split(':');
    codel = {
      targetMs: positiveNumber('codel', String(target), false),
      intervalMs: positiveNumber('codel', String(interval), false),
    };
  }
  return {
    queue,
    ...(v['queue-bound'] !== undefined
      ? {
          queueBound:
            Number(v['queue-bound']) === 0 ? 0 : positiveNumber('queue-bound', v['queue-bound'], true),
        }
      : {}),
    ...(v['concurrency-limit'] !== undefined
      ? { concurrencyLimit: positiveNumber('concurrency-limit', v['concurrency-limit'], true) }
      : {}),
    ...(v['shed-queue-time'] !== undefined
      ? { shedQueueTimeMs: positiveNumber('shed-queue-time', v['shed-queue-time'], false) }
      : {}),
    ...(codel ? { codel } : {}),
    ...(v['deadline-drop'] ? { deadlineDrop: true } : {}),
  };
}

/** The flags that give `m` to the api (the inverse of parseMitigations). */
export function mitigationFlags(m: Mitigations): string[] {
  return [
    ...(m.queue && m.queue !== 'fifo' ? ['--queue', m.queue] : []),
    ...(m.queueBound !== undefined ? ['--queue-bound', String(m.queueBound)] : []),
    ...(m.concurrencyLimit !== undefined ? ['--concurrency-limit', String(m.concurrencyLimit)] : []),
    ...(m.shedQueueTimeMs !== undefined ? ['--shed-queue-time', String(m.shedQueueTimeMs)] : []),
    ...(m.codel ? ['--codel', `${m.codel.targetMs}:${m.codel.intervalMs}`] : []),
    ...(m.deadlineDrop ? ['--deadline-drop'] : []),
  ];
}

/** host:port (IPv4 or a name). */
export function parseHostPort(flag: string, s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  const port = Number(s.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`--${flag}: expected host:port (got "${s}")`);
  return { host: s.slice(0, i), port };
}
