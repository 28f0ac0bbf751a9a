import type { Command } from 'commander';
import { toDoubleDash } from '../../services/faultproxy/args.js';
import { runFaultProxy } from '../../services/faultproxy/run.js';
import { BenchError } from '../../foundation/errors.js';
import { wholeNumber } from './options.js';

/**
 * `metabench faultproxy`: the fault proxy with Toxiproxy's HTTP API, in the foreground.
 * Toxiproxy's single-dash long flags (-host, -port, -config, -seed) are accepted too:
 * commander would read `-host` as the short flags -h -o -s -t, so `rewriteArgv` turns
 * them into their double-dash form before commander sees them.
 */
export function register(program: Command): void {
  program
    .command('faultproxy')
    .description("run the fault proxy (Toxiproxy 2.12's HTTP API; -host/-port/-config like Toxiproxy)")
    .option('--host <host>', 'address the API listens on', '127.0.0.1')
    .option('--port <port>', 'port of the API (0 picks a free one)', wholeNumber('--port', 0, 65535), 8474)
    .option('--config <file>', 'JSON array of proxies to create at start, like POST /populate')
    .option('--seed <n>', 'seed of the toxicity and jitter draws', wholeNumber('--seed', 0, 2 ** 53 - 1))
    .option('--exit-with-parent', 'exit when stdin closes (for the lab)', false)
    .action(
      async (opts: {
        host: string;
        port: number;
        config?: string;
        seed?: number;
        exitWithParent: boolean;
      }) => {
        try {
          await runFaultProxy({
            host: opts.host,
            port: opts.port,
            config: opts.config,
            seed: opts.seed,
            exitWithParent: opts.exitWithParent,
          });
        } catch (err) {
          const message = (err as Error).message;
          if (opts.config !== undefined && message.startsWith(opts.config))
            throw new BenchError('E_USAGE', `faultproxy: -config ${message}`);
          throw new BenchError('E_LAB_PREFLIGHT', `faultproxy: ${message}`);
        }
      },
    );
}

/** Rewrites Toxiproxy-style flags (`-host x`, `-port=1`) of the faultproxy command to `--host`. */
export function rewriteArgv(argv: readonly string[]): string[] {
  const at = argv.indexOf('faultproxy');
  if (at < 0) return [...argv];
  return [...argv.slice(0, at + 1), ...toDoubleDash(argv.slice(at + 1))];
}
