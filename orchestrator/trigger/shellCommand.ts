import { spawn, spawnSync } from 'node:child_process';

/**
 * The user's shell commands (trigger kind `command`): run by `sh -c` in a directory, with a
 * time limit; an exit status other than 0 is an error carrying the command's last output.
 * The run applies and undoes asynchronously (the load generator keeps its schedule); the
 * journal's recovery, which runs before any command from synchronous code, undoes synchronously.
 */

/** The longest a trigger's command may run before it is killed and counted as failed. */
export const COMMAND_TIMEOUT_MS = 30_000;

function failure(command: string, code: number | null, signal: string | null, out: string): Error {
  const tail = out.trim().split('\n').slice(-5).join('\n');
  const how = signal
    ? `was killed by ${signal}${signal === 'SIGTERM' ? ` (over ${COMMAND_TIMEOUT_MS / 1000} s)` : ''}`
    : `exited with status ${code}`;
  return new Error(`\`${command}\` ${how}${tail ? `: ${tail}` : ''}`);
}

/** Runs `command` with `sh -c` in `cwd`; resolves when it exits 0, rejects otherwise. */
export function runCommand(command: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: COMMAND_TIMEOUT_MS,
    });
    let out = '';
    const keep = (d: Buffer): void => {
      out = (out + d.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (err) => reject(new Error(`\`${command}\` could not start: ${err.message}`)));
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(failure(command, code, signal, out)),
    );
  });
}

/** The same, synchronously (the journal's recovery); throws when it does not exit 0. */
export function runCommandSync(command: string, cwd: string): void {
  const r = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
  if (r.error && r.status === null && r.signal === null)
    throw new Error(`\`${command}\` could not start: ${r.error.message}`);
  if (r.status !== 0) throw failure(command, r.status, r.signal, `${r.stdout ?? ''}${r.stderr ?? ''}`);
}
