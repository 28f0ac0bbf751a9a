#!/usr/bin/env node
/**
 * Entry point of the stub LLM provider as its own process (the lab spawns this):
 *   node dist/services/llm-stub/main.js --port 0 --profile FILE --seed 1 --error-rate 0.15
 * The same flags as `metabench llm-stub`.
 */
import { parseArgs } from 'node:util';
import { isBenchError } from '../../foundation/errors.js';
import { parseRateFlag, runLlmStub } from './run.js';

const USAGE = `usage: node dist/services/llm-stub/main.js [flags]   (the flags of \`metabench llm-stub\`)
  --host HOST   --port PORT (default 127.0.0.1:8000)   --profile FILE (services/llm-stub/profiles/default.yaml)
  --seed N   --error-rate R   --timeout-rate R   --rate-limit-rate R   --context-rate R   --cut-rate R
  --exit-with-parent   --help
`;

/** The flags; --help prints the usage (exit 0), a flag it does not know the usage and exit 2. */
function parseFlags() {
  try {
    const parsed = parseArgs({
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '8000' },
        profile: { type: 'string' },
        seed: { type: 'string', default: '1' },
        'error-rate': { type: 'string' },
        'timeout-rate': { type: 'string' },
        'rate-limit-rate': { type: 'string' },
        'context-rate': { type: 'string' },
        'cut-rate': { type: 'string' },
        'exit-with-parent': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (parsed.values.help) {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    return parsed;
  } catch (err) {
    process.stderr.write(`${USAGE}llm-stub: ${(err as Error).message}\n`);
    process.exit(2);
  }
}

try {
  const { values } = parseFlags();
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port takes a whole number from 0 to 65535 (got "${values.port}")`);
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new Error(`--seed takes a whole number (got "${values.seed}")`);
  const rate = (flag: keyof typeof values): number =>
    values[flag] === undefined ? 0 : parseRateFlag(`--${flag}`, String(values[flag]));
  await runLlmStub({
    host: values.host,
    port,
    profile: values.profile,
    seed,
    rates: {
      serverError: rate('error-rate'),
      hang: rate('timeout-rate'),
      rateLimit: rate('rate-limit-rate'),
      contextLength: rate('context-rate'),
      cut: rate('cut-rate'),
    },
    exitWithParent: values['exit-with-parent'],
  });
  process.exit(0);
} catch (err) {
  process.stderr.write(`llm-stub: ${(err as Error).message}\n`);
  process.exit(isBenchError(err) ? err.exitCode : 1);
}
