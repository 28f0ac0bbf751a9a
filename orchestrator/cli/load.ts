import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import { formatLoadReport, runLoad } from '../loadtest/runLoad.js';
import { parseDuration, parseRate } from '../../foundation/units.js';
import { wholeNumber } from './options.js';
import { onInterrupt } from './interrupt.js';

function duration(flag: string) {
  return (v: string): number => {
    const r = parseDuration(v);
    if (!r.ok || r.value <= 0)
      throw new InvalidArgumentError(`${flag}: ${r.ok ? 'must be greater than zero' : r.message}`);
    return r.value;
  };
}

function rate(v: string): number {
  const r = parseRate(v.includes('/') ? v : `${v}/s`);
  if (!r.ok || !('perS' in r.value) || !(r.value.perS > 0))
    throw new InvalidArgumentError(`--rate takes requests per second, such as 500 or 500/s (got "${v}")`);
  return r.value.perS;
}

export function register(program: Command): void {
  program
    .command('load')
    .description(
      'open-loop, coordinated-omission-correct load against any HTTP endpoint (measured from the intended time)',
    )
    .requiredOption('--url <URL>', 'the endpoint, e.g. http://127.0.0.1:8080/work')
    .requiredOption('--rate <R>', 'offered requests per second (500 or 500/s)', rate)
    .requiredOption('--duration <D>', 'how long to offer load (30s, 2m)', duration('--duration'))
    .addOption(
      new Option('--arrival <kind>', 'inter-arrival law').choices(['poisson', 'constant']).default('poisson'),
    )
    .option('--timeout <T>', 'per-attempt timeout', duration('--timeout'), 10_000)
    .addOption(new Option('--retry <policy>', 'retry policy').choices(['none', 'immediate']).default('none'))
    .option(
      '--max-attempts <N>',
      'attempts in all with --retry immediate',
      wholeNumber('--max-attempts', 1, 100),
      3,
    )
    .option(
      '--connections <N>',
      'cap on open connections (default: derived from the rate and the timeout)',
      wholeNumber('--connections', 1, 1_000_000),
    )
    .option('--seed <N>', 'seed of the arrivals', wholeNumber('--seed', 0, 2 ** 32 - 1), 1)
    .option('--no-warmup', 'skip the half-second warm-up of the generator against a local sink')
    .option('--json', 'print one JSON object instead of the human report')
    .option(
      '--hdr-out <FILE>',
      'write an HdrHistogram interval log of response times (µs, one interval per second)',
    )
    .action(
      async (o: {
        url: string;
        rate: number;
        duration: number;
        arrival: 'poisson' | 'constant';
        timeout: number;
        retry: 'none' | 'immediate';
        maxAttempts: number;
        connections?: number;
        seed: number;
        json?: boolean;
        hdrOut?: string;
        warmup: boolean;
      }) => {
        let url: URL;
        try {
          url = new URL(o.url);
        } catch {
          throw new BenchError('E_USAGE', `--url: "${o.url}" is not a URL (e.g. http://127.0.0.1:8080/work)`);
        }
        if (url.protocol !== 'http:')
          throw new BenchError('E_USAGE', `--url: only http:// is supported (got ${url.protocol})`);
        const interrupt = onInterrupt();
        try {
          const report = await runLoad({
            url: o.url,
            ratePerS: o.rate,
            durationMs: o.duration,
            arrival: o.arrival,
            timeoutMs: o.timeout,
            retry: o.retry,
            maxAttempts: o.maxAttempts,
            seed: o.seed,
            connections: o.connections,
            hdrOut: o.hdrOut,
            warmUp: o.warmup,
            stop: interrupt.stop,
          });
          process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : formatLoadReport(report));
          if (interrupt.stop.aborted)
            throw new BenchError('E_INTERRUPTED', 'interrupted: the figures above cover only what was sent');
        } finally {
          interrupt.dispose();
        }
      },
    );
}
