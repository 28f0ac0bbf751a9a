import { ExitCode } from '../../foundation/exitCodes.js';

/** A long command's Ctrl-C, SIGTERM and SIGHUP: `stop` aborts on the first; `dispose` removes the handlers. */
export interface Interrupt {
  readonly stop: AbortSignal;
  dispose(): void;
}

/**
 * The one interrupt handler of the long commands (run, sweep, calibrate, load). The
 * first SIGINT, SIGTERM or SIGHUP (the terminal closed) aborts `stop`, so the command winds down its own way (undo
 * the trigger, stop the lab, write what was measured), after printing `stopping` when
 * given; a second one exits at once (printing `forced` when given): the next metabench
 * command undoes any fault left applied.
 */
export function onInterrupt(opts: { stopping?: string; forced?: string } = {}): Interrupt {
  const ac = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (++signals === 1) {
      if (opts.stopping !== undefined) process.stderr.write(`\n${sig}: ${opts.stopping}\n`);
      ac.abort();
    } else {
      if (opts.forced !== undefined) process.stderr.write(`${sig}: ${opts.forced}\n`);
      process.exit(ExitCode.unusable);
    }
  };
  const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of SIGNALS) process.on(s, onSignal);
  return {
    stop: ac.signal,
    dispose: () => {
      for (const s of SIGNALS) process.off(s, onSignal);
    },
  };
}
