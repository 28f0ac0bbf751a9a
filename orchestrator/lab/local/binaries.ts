import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';

/** A program on the PATH, or undefined. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** redis-server, or a preflight error (exit code 4) saying what to install. */
export function findRedisServer(): string {
  const p = process.env.METABENCH_REDIS_SERVER ?? onPath('redis-server');
  if (!p)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      'this experiment uses a cache, but redis-server is not installed: install the redis-server package ' +
        '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), or set METABENCH_REDIS_SERVER',
    );
  return p;
}

/**
 * The directory holding Postgres's `postgres` and `initdb`: the PATH first, then the
 * distributions' versioned directories (Debian keeps them off the PATH), newest first.
 */
export function findPostgresBin(): string {
  const env = process.env.METABENCH_PG_BINDIR;
  const candidates = [
    ...(env ? [env] : []),
    ...(process.env.PATH ?? '').split(delimiter).filter(Boolean),
    ...versionedDirs('/usr/lib/postgresql'),
  ];
  for (const dir of candidates) {
    try {
      accessSync(join(dir, 'postgres'), constants.X_OK);
      accessSync(join(dir, 'initdb'), constants.X_OK);
      return dir;
    } catch {
      /* not here */
    }
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    'this experiment uses a database, but postgres and initdb were not found: install the postgresql package ' +
      '(Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql), or set METABENCH_PG_BINDIR',
  );
}

/** <root>/<version>/bin, newest version first. */
function versionedDirs(root: string): string[] {
  try {
    return readdirSync(root)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => join(root, v, 'bin'));
  } catch {
    return [];
  }
}
