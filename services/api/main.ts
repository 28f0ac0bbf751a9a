#!/usr/bin/env node
/**
 * Entry point of the api service as its own process:
 *   node dist/services/api/main.js --port 8080 --workers 8 --work exponential:20ms --seed 42
 * Prints one JSON line {"event":"listening",...} on stdout when it accepts requests.
 */
import { parseArgs } from 'node:util';
import { parseDurationDist } from './config.js';
import { startApi } from './server.js';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8080' },
    workers: { type: 'string', default: '8' },
    work: { type: 'string', default: 'exponential:20ms' },
    // A named cost class, NAME=DIST (repeatable): --cost heavy=lognormal:200ms:1
    cost: { type: 'string', multiple: true, default: [] },
    seed: { type: 'string', default: '1' },
    // Exit when stdin closes: the orchestrator's way of never leaving an orphan behind.
    'exit-with-parent': { type: 'boolean', default: false },
  },
});

try {
  const api = await startApi({
    host: values.host,
    port: Number(values.port),
    workers: Number(values.workers),
    work: parseDurationDist(values.work),
    costs: Object.fromEntries(
      values.cost.map((c) => {
        const eq = c.indexOf('=');
        if (eq <= 0) throw new Error(`--cost: expected NAME=DIST (got "${c}")`);
        return [c.slice(0, eq), parseDurationDist(c.slice(eq + 1))];
      }),
    ),
    seed: Number(values.seed),
  });
  process.stdout.write(
    JSON.stringify({ event: 'listening', host: values.host, port: api.port, pid: process.pid }) + '\n',
  );
  const stop = (): void => {
    void api.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (values['exit-with-parent']) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
} catch (err) {
  process.stderr.write(`api: ${(err as Error).message}\n`);
  process.exit(1);
}
