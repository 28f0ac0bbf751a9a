import type { Clock } from '../../foundation/clock.js';
import { round } from '../../foundation/round.js';

/**
 * The generator's own CPU per second (this process, every thread), as a share of one
 * core: run validity's check 5. A sample at each second's boundary on the run's clock;
 * a boundary the event loop reached late divides by the wall time it really covered.
 */
export class GeneratorCpu {
  private readonly perS: (number | null)[] = [];
  private last = process.cpuUsage();
  private lastWallMs = performance.now();
  private cancel: (() => void) | undefined;

  start(clock: Clock): void {
    this.last = process.cpuUsage();
    this.lastWallMs = performance.now();
    const tick = (n: number): void => {
      this.cancel = clock.timer(n * 1000, () => {
        this.sample(n - 1);
        tick(n + 1);
      });
    };
    tick(1);
  }

  private sample(second: number): void {
    const now = process.cpuUsage();
    const wallMs = performance.now();
    const cpuMs = (now.user - this.last.user + now.system - this.last.system) / 1000;
    const spanMs = wallMs - this.lastWallMs;
    this.perS[second] = spanMs > 0 ? round(cpuMs / spanMs, 3) : null;
    this.last = now;
    this.lastWallMs = wallMs;
  }

  /** Stops sampling; one value per whole second sampled (null where none was taken). */
  stop(): (number | null)[] {
    this.cancel?.();
    return Array.from(this.perS, (v) => v ?? null);
  }
}
