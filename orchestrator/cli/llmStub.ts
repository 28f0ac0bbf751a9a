import { InvalidArgumentError, type Command } from 'commander';
import { parseRateFlag, runLlmStub } from '../../services/llm-stub/run.js';
import { BenchError, isBenchError } from '../../foundation/errors.js';
import { wholeNumber } from './options.js';

function rate(flag: string) {
  return (v: string): number => {
    try {
      return parseRateFlag(flag, v);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

/** `metabench llm-stub`: the stub LLM provider (OpenAI chat/embeddings, Ollama embeddings), in the foreground. */
export function register(program: Command): void {
  program
    .command('llm-stub')
    .description(
      'run the stub LLM provider: OpenAI chat completions and embeddings, Ollama embeddings, no key',
    )
    .option('--host <host>', 'address it listens on', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', wholeNumber('--port', 0, 65535), 8000)
    .option('--profile <file>', 'latency profile (default: services/llm-stub/profiles/default.yaml)')
    .option(
      '--seed <n>',
      'seed of the per-request fault and latency draws',
      wholeNumber('--seed', 0, 2 ** 53 - 1),
      1,
    )
    .option('--error-rate <r>', 'fraction answered 500 (0.15 or 15%)', rate('--error-rate'), 0)
    .option('--timeout-rate <r>', 'fraction never answered (held open)', rate('--timeout-rate'), 0)
    .option('--rate-limit-rate <r>', 'fraction answered 429 with Retry-After', rate('--rate-limit-rate'), 0)
    .option('--context-rate <r>', 'fraction answered 400 context_length_exceeded', rate('--context-rate'), 0)
    .option('--cut-rate <r>', 'fraction whose connection is destroyed mid-answer', rate('--cut-rate'), 0)
    .option('--exit-with-parent', 'exit when stdin closes (for the lab)', false)
    .action(
      async (opts: {
        host: string;
        port: number;
        profile?: string;
        seed: number;
        errorRate: number;
        timeoutRate: number;
        rateLimitRate: number;
        contextRate: number;
        cutRate: number;
        exitWithParent: boolean;
      }) => {
        try {
          await runLlmStub({
            host: opts.host,
            port: opts.port,
            profile: opts.profile,
            seed: opts.seed,
            rates: {
              serverError: opts.errorRate,
              hang: opts.timeoutRate,
              rateLimit: opts.rateLimitRate,
              contextLength: opts.contextRate,
              cut: opts.cutRate,
            },
            exitWithParent: opts.exitWithParent,
          });
        } catch (err) {
          if (isBenchError(err)) throw err;
          // A listen error is the machine's (port taken); anything else is a bad flag combination.
          const listen = typeof (err as NodeJS.ErrnoException).syscall === 'string';
          throw new BenchError(listen ? 'E_LAB_PREFLIGHT' : 'E_USAGE', `llm-stub: ${(err as Error).message}`);
        }
      },
    );
}
