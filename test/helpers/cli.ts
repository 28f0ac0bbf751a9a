import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshStateDir } from './state.js';

export const CLI = fileURLToPath(new URL('../../orchestrator/cli/main.js', import.meta.url));
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts `metabench ARGS` as a child process (stdout/stderr captured). Its state folder
 * is a fresh temporary one unless `env` names one (METABENCH_STATE_DIR): a calibration
 * stored on this machine never changes what a test runs.
 */
export function startCli(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<CliResult>; stderrSoFar: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, METABENCH_STATE_DIR: freshStateDir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d));
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, stderrSoFar: () => stderr };
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(args, env).done;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `metabench-${prefix}-`));
}

/** Polls `cond` every 50 ms until it holds; fails after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
