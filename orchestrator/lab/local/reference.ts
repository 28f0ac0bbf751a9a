import { startGunicorn } from './referenceGunicorn.js';
import { startJvm } from './referenceJvm.js';
import { startPhpFpm } from './referencePhpFpm.js';
import { checkReferenceOptions, type ReferenceOptions, type ReferenceServer } from './referenceServer.js';

export type { ReferenceOptions, ReferenceServer, ReferenceKind, JvmOptions } from './referenceServer.js';
export { predictedCapacityPerS, REFERENCE_KINDS } from './referenceServer.js';

/**
 * Starts one reference server on loopback (issue 34, point 3) and resolves once its
 * health URL answers; the caller stops it. Its capacity is predicted as c / S.
 */
export async function startReference(o: ReferenceOptions): Promise<ReferenceServer> {
  checkReferenceOptions(o);
  switch (o.kind) {
    case 'php-fpm':
      return startPhpFpm(o);
    case 'gunicorn':
      return startGunicorn(o);
    case 'jvm':
      return startJvm(o);
  }
}
