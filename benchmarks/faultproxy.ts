/**
 * What the fault proxy costs with no toxic: an HTTP server, the fault proxy in front of
 * it (each its own process, as in the lab), and an open-loop client at a fixed rate,
 * first straight to the server, then through the proxy, alternating rounds.
 *
 *   npm run bench:faultproxy -- [--rate 5000] [--seconds 10] [--rounds 2]
 *
 * Prints, per path, the service time (completion − actual send) p50/p99 and the
 * throughput achieved, then the proxy's added latency and its throughput ratio, and a
 * closed-loop maximum throughput for both paths. Figures, not assertions: the machine
 * is shared and noisy; read them with its core count in mind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadNow, RESULTS_DIR, writeGoals } from './goals.js';
import { Pool } from 'undici';
import { RealClock } from '../foundation/clock.js';
import {
  createLatencyHistogram,
  recordMs,
  summarize,
  type LatencySummary,
} from '../bench/record/histogram.js';
import { LinkClient } from '../orchestrator/lab/links.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    'max-seconds': { type: 'string', default: '5' },
  },
});
const ratePerS = Number(values.rate);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const maxSeconds = Number(values['max-seconds']);

const FAULTPROXY = fileURLToPath(new URL('../services/faultproxy/main.js', import.meta.url));
const SERVER = `
  const http = require('node:http');
  const body = Buffer.from('ok');
  const s = http.createServer((req, res) => { res.writeHead(200, { 'content-length': 2 }); res.end(body); });
  s.keepAliveTimeout = 60000;
  s.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ event: 'listening', port: s.address().port })));
`;

function start(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
}

interface OpenLoopResult {
  service: LatencySummary;
  response: LatencySummary;
  okPerS: number;
  failures: number;
  lateSends: number;
}

/** Open loop: a request every 1/rate s by intended time, never waiting for earlier ones. */
async function openLoop(url: string, rate: number, durationS: number): Promise<OpenLoopResult> {
  const clock = new RealClock();
  const pool = new Pool(url, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
  const service = createLatencyHistogram();
  const response = createLatencyHistogram();
  const total = Math.round(rate * durationS);
  const gapMs = 1000 / rate;
  let ok = 0;
  let failures = 0;
  let lateSends = 0;
  let lastDoneMs = 0;
  const inFlight: Promise<void>[] = [];
  // Sends go out in 1 ms batches (every request whose intended time has come), so the
  // client does not spin a core between sends on this 2-core machine; the batching lag
  // counts in the response time, not in the service time compared below.
  let i = 0;
  while (i < total) {
    const nowMs = clock.now();
    for (; i < total && i * gapMs <= nowMs; i++) {
      const intendedMs = i * gapMs;
      const sentMs = clock.now();
      if (sentMs - intendedMs > 1) lateSends++;
      inFlight.push(
        pool.request({ method: 'GET', path: '/' }).then(
          async (res) => {
            await res.body.dump();
            const doneMs = clock.now();
            lastDoneMs = Math.max(lastDoneMs, doneMs);
            if (res.statusCode !== 200) return void failures++;
            ok++;
            recordMs(service, doneMs - sentMs);
            recordMs(response, doneMs - intendedMs);
          },
          () => void failures++,
        ),
      );
    }
    if (inFlight.length > 4096) inFlight.splice(0, 2048); // settled long ago, their counts are in
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  await pool.close();
  return {
    service: summarize(service),
    response: summarize(response),
    okPerS: ok / (Math.max(lastDoneMs, durationS * 1000) / 1000),
    failures,
    lateSends,
  };
}

/** Closed loop with `concurrency` workers: the most requests per second the path carries. */
async function closedLoop(url: string, concurrency: number, durationS: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const end = performance.now() + durationS * 1000;
  let ok = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const res = await pool.request({ method: 'GET', path: '/' });
        await res.body.dump();
        if (res.statusCode === 200) ok++;
      }
    }),
  );
  await pool.close();
  return ok / durationS;
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
}

const f = (n: number | null): string => (n === null ? '-' : n.toFixed(3));

const server = await start(['-e', SERVER]);
const load = loadNow();
const out: string[] = [];
const say = (text: string): void => {
  out.push(text);
  process.stdout.write(text);
};
const proxyProc = await start([FAULTPROXY, '-port', '0', '-seed', '1']);
try {
  const links = new LinkClient(`http://127.0.0.1:${proxyProc.port}`);
  const link = await links.ensureLink({
    name: 'bench',
    listen: '127.0.0.1:0',
    upstream: `127.0.0.1:${server.port}`,
  });
  const paths = {
    direct: `http://127.0.0.1:${server.port}`,
    proxy: `http://${link.listen}`,
  };
  say(
    `# fault proxy overhead, no toxic\n\n` +
      `${new Date().toISOString()} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Node ${process.version}\n` +
      `open loop ${ratePerS} req/s for ${seconds} s per round, ${rounds} rounds per path (alternating), ` +
      `HTTP/1.1 keep-alive, 2-byte responses; server, fault proxy and client are separate processes; ` +
      `load average before: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}\n\n`,
  );
  // Warm both paths up (JIT, connections) without recording.
  await openLoop(paths.direct, ratePerS, 2);
  await openLoop(paths.proxy, ratePerS, 2);

  const results: Record<'direct' | 'proxy', OpenLoopResult[]> = { direct: [], proxy: [] };
  say(
    '| round | path | samples | service p50 ms | p99 ms | response p99 ms | ok/s | failures | late sends | server CPU µs/req | proxy CPU µs/req | client CPU µs/req |\n',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|\n');
  for (let r = 1; r <= rounds; r++) {
    for (const path of ['direct', 'proxy'] as const) {
      const cpu0 = {
        server: cpuMs(server.child.pid!),
        proxy: cpuMs(proxyProc.child.pid!),
        client: process.cpuUsage(),
      };
      const res = await openLoop(paths[path], ratePerS, seconds);
      const perReqUs = (ms: number): string => ((ms * 1000) / Math.max(1, res.service.samples)).toFixed(0);
      const client = process.cpuUsage(cpu0.client);
      results[path].push(res);
      say(
        `| ${r} | ${path} | ${res.service.samples} | ${f(res.service.p50)} | ${f(res.service.p99)} | ` +
          `${f(res.response.p99)} | ${res.okPerS.toFixed(0)} | ${res.failures} | ${res.lateSends} | ` +
          `${perReqUs(cpuMs(server.child.pid!) - cpu0.server)} | ${perReqUs(cpuMs(proxyProc.child.pid!) - cpu0.proxy)} | ` +
          `${perReqUs((client.user + client.system) / 1000)} |\n`,
      );
    }
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const p50 = (path: 'direct' | 'proxy') => mean(results[path].map((x) => x.service.p50 ?? NaN));
  const p99 = (path: 'direct' | 'proxy') => mean(results[path].map((x) => x.service.p99 ?? NaN));
  const okPerS = (path: 'direct' | 'proxy') => mean(results[path].map((x) => x.okPerS));
  say(
    `\nadded latency (proxy − direct, mean over rounds): p50 ${(p50('proxy') - p50('direct')).toFixed(3)} ms, ` +
      `p99 ${(p99('proxy') - p99('direct')).toFixed(3)} ms\n` +
      `throughput at ${ratePerS} req/s offered: proxy/direct = ${(okPerS('proxy') / okPerS('direct')).toFixed(3)}\n`,
  );
  const maxDirect = await closedLoop(paths.direct, 32, maxSeconds);
  const maxProxy = await closedLoop(paths.proxy, 32, maxSeconds);
  say(
    `closed loop, 32 connections, ${maxSeconds} s: direct ${maxDirect.toFixed(0)} req/s, ` +
      `proxy ${maxProxy.toFixed(0)} req/s, ratio ${(maxProxy / maxDirect).toFixed(3)}\n`,
  );
  // Issue 5's goals: under 0.2 ms added at p50, throughput at least 80% of direct.
  const addedP50 = p50('proxy') - p50('direct');
  const ratio = okPerS('proxy') / okPerS('direct');
  writeGoals('faultproxy', load, [
    {
      figure: `fault proxy's added latency p50, no toxic, ${ratePerS}/s`,
      measured: `${addedP50.toFixed(3)} ms`,
      goal: '< 0.2 ms',
      met: addedP50 < 0.2,
    },
    {
      figure: `throughput through the proxy / direct, ${ratePerS}/s offered`,
      measured: ratio.toFixed(3),
      goal: '>= 0.8',
      met: ratio >= 0.8,
    },
  ]);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `faultproxy-${new Date().toISOString().slice(0, 10)}.md`);
  writeFileSync(file, out.join(''));
  process.stdout.write(`written to ${file}\n`);
} finally {
  proxyProc.child.kill('SIGTERM');
  server.child.kill('SIGTERM');
}
