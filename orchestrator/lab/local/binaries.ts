import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
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

/**
 * The reference labs' programs (issue 34): each found on the PATH (Debian keeps nginx and
 * php-fpm in /usr/sbin, searched too), or named by an environment variable; missing, a
 * preflight error (exit code 4) with the command that installs it.
 */
export interface ReferenceBinary {
  readonly program: string;
  /** Names to look for, in order (Debian names php-fpm by its version). */
  readonly names: readonly string[];
  readonly env: string;
  readonly pkg: string;
  readonly why: string;
}

export const NGINX: ReferenceBinary = {
  program: 'nginx',
  names: ['nginx'],
  env: 'METABENCH_NGINX',
  pkg: 'nginx',
  why: 'the PHP-FPM and gunicorn reference labs put nginx in front of their pools',
};
export const PHP_FPM: ReferenceBinary = {
  program: 'php-fpm',
  names: ['php-fpm8.2', 'php-fpm'],
  env: 'METABENCH_PHP_FPM',
  pkg: 'php8.2-fpm',
  why: 'the PHP-FPM reference lab runs a static pool of php-fpm children',
};
export const GUNICORN: ReferenceBinary = {
  program: 'gunicorn',
  names: ['gunicorn'],
  env: 'METABENCH_GUNICORN',
  pkg: 'gunicorn python3-prometheus-client',
  why: 'the gunicorn reference lab runs gunicorn with sync workers',
};
export const JAVA: ReferenceBinary = {
  program: 'java',
  names: ['java'],
  env: 'METABENCH_JAVA',
  pkg: 'openjdk-17-jdk-headless',
  why: 'the JVM reference lab runs on the JDK',
};
export const JAVAC: ReferenceBinary = {
  program: 'javac',
  names: ['javac'],
  env: 'METABENCH_JAVAC',
  pkg: 'openjdk-17-jdk-headless',
  why: 'the JVM reference lab compiles its server with javac when it starts',
};

/** A reference lab's program, or a preflight error naming the package and how to install it. */
export function findReferenceBinary(b: ReferenceBinary, path = process.env.PATH ?? ''): string {
  const fromEnv = process.env[b.env];
  if (fromEnv) return fromEnv;
  const dirs = `${path}${delimiter}/usr/sbin${delimiter}/usr/local/sbin`;
  for (const name of b.names) {
    const p = onPath(name, dirs);
    if (p) return p;
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    `${b.why}, but ${b.program} is not installed: install it (Debian/Ubuntu: apt-get install ${b.pkg}), ` +
      `or set ${b.env}`,
  );
}

/**
 * The Python module a reference lab imports, checked with the interpreter that runs
 * `program` (its #! line): gunicorn's metrics need python3-prometheus-client.
 */
export function checkPythonModule(program: string, module: string, pkg: string): void {
  let interpreter = 'python3';
  try {
    const first = readFileSync(program, 'utf8').split('\n', 1)[0] ?? '';
    if (first.startsWith('#!')) interpreter = first.slice(2).trim().split(/\s+/)[0] ?? interpreter;
  } catch {
    /* not a script: try python3 */
  }
  const r = spawnSync(interpreter, ['-c', `import ${module}`], { stdio: 'ignore' });
  if (r.status !== 0)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `${program} runs on ${interpreter}, which cannot import ${module}: install it (Debian/Ubuntu: apt-get install ${pkg})`,
    );
}
