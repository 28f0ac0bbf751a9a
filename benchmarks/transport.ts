/**
 * The HTTP transport alone (npm run bench:transport): CPU per request of
 * bench/transport/http.ts against Debian's nginx on loopback, nginx pinned to CPU 1 and
 * the client to CPU 0, closed loop with 32 attempts in flight (no schedule, no policies,
 * no recorder: what the generator's CPU per request owes to the transport), through
 * `dispatch` (the handler seam) and through `send` (its promise form). It prints figures
 * and writes them to benchmarks/results/transport-<date>.md; it asserts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RealClock } from '../foundation/clock.js';
import { leanController } from '../bench/leanAbort.js';
import type { Attempt } from '../bench/outcome.js';
import { HttpTransport } from '../bench/transport/http.js';
import type { TransportResult } from '../bench/transport/Transport.js';
import { loadNow } from './goals.js';
import { startNginx } from './nginx.js';

const RESULTS = fileURLToPath(new URL('../../benchmarks/results/', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const REQUESTS = 100_000;
const IN_FLIGHT = 32;

type Mode = 'dispatch' | 'send';

/** The child: `requests` attempts, IN_FLIGHT at a time, after a warm-up; prints one JSON line. */
async function measure(url: string, mode: Mode, requests: number): Promise<void> {
  const t = new HttpTransport({ url, path: '/', connections: 2 * IN_FLIGHT, clock: new RealClock() });
  let id = 0;
  const round = (total: number): Promise<void> =>
    new Promise((resolve, reject) => {
      let started = 0;
      let done = 0;
      const onResult = (r: TransportResult): void => {
        if (r.kind !== 'ok') reject(new Error(`an attempt came to ${r.kind}`));
        else if (++done === total) resolve();
        else next();
      };
      const handler = { onResult };
      const next = (): void => {
        if (started++ >= total) return;
        const a: Attempt = { origin: { id: id++, intendedMs: 0, deadlineMs: Infinity }, number: 1 };
        if (mode === 'dispatch') t.dispatch(a, undefined, handler);
        else void t.send(a, undefined, leanController().signal).then(onResult);
      };
      for (let k = 0; k < IN_FLIGHT; k++) next();
    });
  await round(20_000);
  const cpu0 = process.cpuUsage();
  await round(requests);
  const cpu = process.cpuUsage(cpu0);
  await t.close();
  process.stdout.write(
    JSON.stringify({ userUs: cpu.user / requests, systemUs: cpu.system / requests }) + '\n',
  );
}

function child(url: string, mode: Mode): Promise<{ userUs: number; systemUs: number }> {
  return new Promise((resolve, reject) => {
    const c = spawn('taskset', ['-c', '0', process.execPath, SELF, url, mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { userUs: number; systemUs: number })
        : reject(new Error(`exit ${code}`)),
    );
  });
}

const [urlArg, modeArg] = process.argv.slice(2);
if (urlArg) await measure(urlArg, modeArg as Mode, REQUESTS);
else {
  const load = loadNow();
  const nginx = await startNginx(1);
  const rows: string[] = [];
  try {
    for (const mode of ['dispatch', 'send', 'dispatch', 'send'] as const) {
      const r = await child(nginx.url, mode);
      rows.push(
        `| ${mode} | ${r.userUs.toFixed(2)} | ${r.systemUs.toFixed(2)} | ${(r.userUs + r.systemUs).toFixed(2)} |`,
      );
    }
  } finally {
    await nginx.stop();
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = [
    `# HTTP transport alone, ${date}`,
    '',
    `${REQUESTS} requests per row, ${IN_FLIGHT} in flight, closed loop, against nginx (\`return 200\`) on loopback; load average at the start ${load.join(', ')}.`,
    '',
    '| path | user µs/request | system µs/request | CPU µs/request |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(out);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(`${RESULTS}transport-${date}.md`, out);
}
