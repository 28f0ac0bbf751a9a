import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The two services written only for the system tests (test/fixtures/system/). */
export const FRONT = fileURLToPath(new URL('../fixtures/system/front.js', import.meta.url));
export const BACK = fileURLToPath(new URL('../fixtures/system/back.js', import.meta.url));

export interface Started {
  readonly child: ChildProcess;
  readonly port: number;
}

/** Starts a fixture service with `env`; resolves with its port once it says it listens. */
export async function startService(main: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const msg = JSON.parse(line) as { event?: string; port?: number };
    if (msg.event === 'listening' && msg.port) return { child, port: msg.port };
  }
  throw new Error(`${main} exited before listening`);
}

/** Stops a fixture service and waits for it to exit. */
export async function stopService(s: Started | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = once(s.child, 'exit');
  s.child.kill('SIGTERM');
  await exited;
}
