#!/usr/bin/env node
/**
 * Entry point of the api service as its own process:
 *   node dist/services/api/main.js --port 8080 --workers 8 --work exponential:20ms --seed 42
 * Prints one JSON line {"event":"listening",...} on stdout when it accepts requests.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  parseDbRetry,
  parseDurationDist,
  parseErrorCost,
  parseHostPort,
  parseMitigations,
} from './config.js';
import type { LlmRoutesConfig } from './llmRoutes.js';
import type { ReadThroughConfig } from './readThrough.js';
import { startApi } from './server.js';

const USAGE = `usage: node dist/services/api/main.js [flags]
  --host HOST  --port PORT (default 127.0.0.1:8080)   --workers N (8)   --work DIST (exponential:20ms)
  --cost NAME=DIST (repeatable)   --seed N   --queue fifo|lifo   --queue-bound N   --concurrency-limit N
  --shed-queue-time MS   --codel TARGET_MS:INTERVAL_MS   --deadline-drop   --request-timeout MS
  --error-cost DIST   --error-cost-on-shed
  --redis HOST:PORT --postgres HOST:PORT   --db-user U --db-name D --db-pool N --db-delay DIST --cache-ttl S
                                           [--db-retry ATTEMPTS:TIMEOUT_MS]
  --redis-password-file FILE   --postgres-password-file FILE   (the password, read once at start)
  --llm HOST:PORT   --llm-slots N   --llm-timeout MS   --llm-retry ATTEMPTS:BASE_MS:CAP_MS
  --llm-model NAME   --llm-embedding-model NAME   --exit-with-parent   --help
Prints one JSON line {"event":"listening",...} on stdout when it accepts requests.
`;

/** The flags; --help prints the usage (exit 0), a flag it does not know the usage and exit 2. */
function parseFlags(): ReturnType<typeof parseApiArgs> {
  try {
    const parsed = parseApiArgs();
    if (parsed.values.help) {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    return parsed;
  } catch (err) {
    // The usage, then the error as the last line (what a container log's tail shows).
    process.stderr.write(`${USAGE}api: ${(err as Error).message}\n`);
    process.exit(2);
  }
}

function parseApiArgs() {
  return parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8080' },
      workers: { type: 'string', default: '8' },
      work: { type: 'string', default: 'exponential:20ms' },
      // A named cost class, NAME=DIST (repeatable): --cost heavy=lognormal:200ms:1
      cost: { type: 'string', multiple: true, default: [] },
      seed: { type: 'string', default: '1' },
      // Server-side mitigations, each off unless given.
      queue: { type: 'string', default: 'fifo' }, // fifo | lifo
      'queue-bound': { type: 'string' },
      'concurrency-limit': { type: 'string' },
      'shed-queue-time': { type: 'string' }, // ms
      codel: { type: 'string' }, // TARGET_MS:INTERVAL_MS
      'deadline-drop': { type: 'boolean', default: false },
      // Server-side request timeout, ms from arrival (abandons the request and its DB query).
      'request-timeout': { type: 'string' },
      // Extra work on a request that ends in an error (timeout, dependency, deadline; a pickup shed with --error-cost-on-shed).
      'error-cost': { type: 'string' },
      'error-cost-on-shed': { type: 'boolean', default: false },
      // Read-through cache: both addresses are host:port, so a proxy can sit in between.
      redis: { type: 'string' },
      postgres: { type: 'string' },
      'db-user': { type: 'string', default: 'postgres' },
      'db-name': { type: 'string', default: 'postgres' },
      'db-pool': { type: 'string', default: '8' },
      'db-delay': { type: 'string', default: 'constant:10ms' },
      'db-retry': { type: 'string' },
      'cache-ttl': { type: 'string', default: '3600' }, // seconds
      // Files holding the passwords (a swarm secret under /run/secrets): never on the command line.
      'redis-password-file': { type: 'string' },
      'postgres-password-file': { type: 'string' },
      // An LLM provider, host:port (its link), for /chat, /agent, /retrieve and /ingest.
      llm: { type: 'string' },
      'llm-slots': { type: 'string', default: '64' },
      'llm-timeout': { type: 'string', default: '10000' }, // ms per attempt
      'llm-retry': { type: 'string', default: '3:200:2000' }, // ATTEMPTS:BASE_MS:CAP_MS
      'llm-model': { type: 'string', default: 'gpt-4o-mini' },
      'llm-embedding-model': { type: 'string', default: 'text-embedding-3-small' },
      // Exit when stdin closes: the orchestrator's way of never leaving an orphan behind.
      'exit-with-parent': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
}

const { values } = parseFlags();

function positive(flag: string, v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new Error(`--${flag}: expected a positive number (got "${v}")`);
  return n;
}

/** A password file's content (surrounding white space dropped), or undefined without the flag. */
function passwordFile(flag: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(
      `--${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      { cause: err },
    );
  }
}

function cacheConfig(): { cache?: ReadThroughConfig } {
  if (values.redis === undefined && values.postgres === undefined) return {};
  if (values.redis === undefined || values.postgres === undefined)
    throw new Error('a read-through cache needs both --redis and --postgres');
  return {
    cache: {
      redis: parseHostPort('redis', values.redis),
      postgres: parseHostPort('postgres', values.postgres),
      dbUser: values['db-user'],
      dbName: values['db-name'],
      poolSize: positive('db-pool', values['db-pool']),
      queryDelay: parseDurationDist(values['db-delay']),
      ttlS: positive('cache-ttl', values['cache-ttl']),
      ...(values['db-retry'] !== undefined ? { retry: parseDbRetry(values['db-retry']) } : {}),
      redisPassword: passwordFile('redis-password-file', values['redis-password-file']),
      dbPassword: passwordFile('postgres-password-file', values['postgres-password-file']),
    },
  };
}

function llmConfig(): { llm?: LlmRoutesConfig } {
  if (values.llm === undefined) return {};
  const [attempts, base, cap] = values['llm-retry'].split(':').map(Number);
  if (!(Number.isInteger(attempts) && attempts! >= 1 && base! >= 0 && cap! >= 0))
    throw new Error(`--llm-retry: expected ATTEMPTS:BASE_MS:CAP_MS (got "${values['llm-retry']}")`);
  return {
    llm: {
      address: parseHostPort('llm', values.llm),
      slots: positive('llm-slots', values['llm-slots']),
      timeoutMs: positive('llm-timeout', values['llm-timeout']),
      retry: { maxAttempts: attempts!, baseMs: base!, capMs: cap! },
      model: values['llm-model'],
      embeddingModel: values['llm-embedding-model'],
    },
  };
}

try {
  const errorCost = parseErrorCost(values);
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
    mitigations: parseMitigations(values),
    ...(values['request-timeout'] !== undefined
      ? { requestTimeoutMs: positive('request-timeout', values['request-timeout']) }
      : {}),
    ...(errorCost ? { errorCost } : {}),
    ...cacheConfig(),
    ...llmConfig(),
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
