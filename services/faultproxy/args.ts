import { parseArgs } from 'node:util';

/** The flags of `metabench faultproxy` and of services/faultproxy/main.js (Toxiproxy's own). */
export interface FaultProxyArgs {
  host: string;
  port: number;
  config: string | undefined;
  seed: number | undefined;
  exitWithParent: boolean;
}

const longFlags = ['host', 'port', 'config', 'seed', 'exit-with-parent', 'help'];

/**
 * Toxiproxy is a Go program: its long flags take one dash (`-host 0.0.0.0`,
 * `-port=8474`). Rewrites those to the double-dash form so either spelling works.
 */
export function toDoubleDash(argv: readonly string[]): string[] {
  return argv.map((a) => {
    const m = /^-([a-z-]+)(=.*)?$/.exec(a);
    return m && longFlags.includes(m[1]!) ? `-${a}` : a;
  });
}

/** Parses the flags (either dash style); throws an Error with a message for a person. */
export function parseFaultProxyArgs(argv: readonly string[]): FaultProxyArgs & { help: boolean } {
  const { values } = parseArgs({
    args: toDoubleDash(argv),
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8474' },
      config: { type: 'string' },
      seed: { type: 'string' },
      'exit-with-parent': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`-port takes a whole number from 0 to 65535 (got "${values.port}")`);
  let seed: number | undefined;
  if (values.seed !== undefined) {
    seed = Number(values.seed);
    if (!Number.isInteger(seed)) throw new Error(`-seed takes a whole number (got "${values.seed}")`);
  }
  return {
    host: values.host,
    port,
    config: values.config,
    seed,
    exitWithParent: values['exit-with-parent'],
    help: values.help,
  };
}

export const usage = `usage: metabench faultproxy [-host 127.0.0.1] [-port 8474] [-config FILE] [-seed N]

A fault proxy speaking Toxiproxy 2.12's HTTP API (same flags, one or two dashes).
  -host HOST     address the API listens on (default 127.0.0.1)
  -port PORT     port of the API (default 8474; 0 picks a free one)
  -config FILE   JSON array of proxies to create at start, like POST /populate
  -seed N        seed of the toxicity and jitter draws (default: from the clock)
Prints one JSON line {"event":"listening",...} once the API accepts requests.
`;
