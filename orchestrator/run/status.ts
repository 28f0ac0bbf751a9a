import type { BucketFigures } from '../../bench/record/Recorder.js';
import { csvNumber } from '../results/timeseries.js';

/**
 * The live status line: phase, elapsed/total, then the last complete second's figures —
 * offered, attempts, goodput, amplification, p99 and in flight — exactly as that
 * second's row of timeseries.csv will have them (the same series, read once they can no
 * longer change: Recorder.lastCompleteBucket; the same rounding). A second is complete
 * once its end has passed, an origin intended after it has been offered and every
 * attempt started in it has ended, so the line usually shows the second before last,
 * and holds still while a second's attempts are still out (up to the attempt timeout).
 * Redrawn in place on a terminal; one line every 5 s otherwise (so CI logs stay readable).
 */
export class StatusLine {
  private readonly tty: boolean;
  private lastPrintMs = -Infinity;

  constructor(
    private readonly out: Pick<NodeJS.WriteStream, 'write' | 'isTTY'> = process.stderr,
    private readonly quiet = false,
  ) {
    this.tty = Boolean(out.isTTY);
  }

  update(x: {
    label: string;
    phase: string;
    elapsedS: number;
    totalS: number;
    /** The last complete second, or null before the first is. */
    second: BucketFigures | null;
  }): void {
    if (this.quiet) return;
    const text = `${x.label} ${x.phase.padEnd(8)} ${fmt(x.elapsedS)}/${fmt(x.totalS)} s  ${describeSecond(x.second)}`;
    if (this.tty) {
      this.out.write(`\r\x1b[K${text}`);
    } else if (x.elapsedS * 1000 - this.lastPrintMs >= 5000) {
      this.lastPrintMs = x.elapsedS * 1000;
      this.out.write(text + '\n');
    }
  }

  say(line: string): void {
    if (this.quiet) return;
    this.out.write(this.tty ? `\r\x1b[K${line}\n` : `${line}\n`);
  }

  done(): void {
    if (this.tty && !this.quiet) this.out.write('\r\x1b[K');
  }
}

/**
 * A second's figures as the status line prints them: its t_s, then each figure as
 * timeseries.csv writes it ('–' for an empty cell: nothing offered, no success).
 */
export function describeSecond(b: BucketFigures | null): string {
  if (!b) return 'second –: not complete yet';
  const v = (x: number | null): string => csvNumber(x) || '–';
  return (
    `second ${b.bucket}: offered ${b.offered}  attempts ${b.attempts}  goodput ${b.goodput}  ` +
    `amp ${v(b.amplification)}  p99 ${b.p99Ms === null ? '–' : `${v(b.p99Ms)} ms`}  in-flight ${b.inFlight}`
  );
}

/** The status line's figures of the last complete second of `rec`, or null. */
export function lastSecond(rec: {
  lastCompleteBucket(): number;
  figures(i: number): BucketFigures;
}): BucketFigures | null {
  const i = rec.lastCompleteBucket();
  return i < 0 ? null : rec.figures(i);
}

function fmt(s: number): string {
  return s.toFixed(0);
}
