import { ExitCode } from '../../foundation/exitCodes.js';
import { appliedNow } from '../trigger/journal.js';

/** A long command's Ctrl-C, SIGTERM and SIGHUP: `stop` aborts on the first; `dispose` removes the handlers. */
export interface Interrupt {
  readonly stop: AbortSignal;
  dispose(): void;
}

/**
 * What to say on a signal. `left`: what this process has applied and not yet undone (a
 * trigger's fault, the lab itself), from its fault journal. The first signal: `stopping`,
 * and when something is applied, that winding down undoes it and `metabench lab reset`
 * does if it cannot; a forced exit (the second): what it leaves behind and the command
 * that undoes it, or that nothing is. Null: nothing to say.
 */
export function interruptMessage(
  sig: string,
  phase: 'stopping' | 'forced',
  left: readonly string[],
  opts: { stopping?: string; forced?: string },
): string | null {
  const what = left.join('; ');
  if (phase === 'stopping') {
    const head = opts.stopping !== undefined ? `\n${sig}: ${opts.stopping}\n` : '';
    if (left.length === 0) return head || null;
    return `${head}${sig}: still applied: ${what}; if it does not stop on its own (or you press Ctrl-C again), \`metabench lab reset\` undoes them\n`;
  }
  if (left.length === 0)
    return opts.forced !== undefined ? `${sig}: ${opts.forced}; nothing was left applied\n` : null;
  return `${sig}: ${opts.forced ?? 'forced exit'}; left applied: ${what}. Run \`metabench lab reset\` to undo ${left.length === 1 ? 'it' : 'them'} (the next metabench command does too)\n`;
}

/**
 * The one interrupt handler of the long commands (run, sweep, calibrate, load). The
 * first SIGINT, SIGTERM or SIGHUP (the terminal closed) aborts `stop`, so the command winds down its own way (undo
 * the trigger, stop the lab, write what was measured), after printing `stopping` when
 * given; a second one exits at once (printing `forced` when given). Either names
 * `metabench lab reset` when a fault or lab is still applied (`left`, by default this
 * process's fault journal): the next metabench command undoes it too.
 */
export function onInterrupt(
  opts: { stopping?: string; forced?: string; left?: () => readonly string[] } = {},
): Interrupt {
  const ac = new AbortController();
  const left = opts.left ?? (() => appliedNow());
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    const first = ++signals === 1;
    const said = interruptMessage(sig, first ? 'stopping' : 'forced', left(), opts);
    if (said !== null) process.stderr.write(said);
    if (first) ac.abort();
    else process.exit(ExitCode.unusable);
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
