import type { LiveCounts } from '../../bench/record/Recorder.js';

/**
 * The live status line: phase, elapsed/total, offered/s, attempts/s, goodput/s,
 * amplification, p99. Redrawn in place on a terminal; one line every 5 s otherwise
 * (so CI logs stay readable).
 */
export class StatusLine {
  private readonly tty: boolean;
  private lastPrintMs = -Infinity;

  constructor(
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly quiet = false,
  ) {
    this.tty = Boolean(out.isTTY);
  }

  update(x: {
    label: string;
    phase: string;
    elapsedS: number;
    totalS: number;
    live: LiveCounts;
    p99Ms: number | null;
  }): void {
    if (this.quiet) return;
    const l = x.live;
    const amp = l.offered > 0 ? (l.attempts / l.offered).toFixed(2) : '–';
    const text =
      `${x.label} ${x.phase.padEnd(8)} ${fmt(x.elapsedS)}/${fmt(x.totalS)} s  ` +
      `offered ${l.offered}/s  attempts ${l.attempts}/s  goodput ${l.goodput}/s  amp ${amp}  ` +
      `p99 ${x.p99Ms === null ? '–' : `${Math.round(x.p99Ms)} ms`}  in-flight ${l.inFlight}`;
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

function fmt(s: number): string {
  return s.toFixed(0);
}
