import { test } from 'node:test';
import assert from 'node:assert/strict';
import { erlangC, md1, mmc, mmcSojournQuantile, mmcSojournTail } from '../orchestrator/model/queueing.js';
import { runQueue } from '../test/helpers/queueRun.js';

// The simulated api (its own WorkerPool and FIFO queue on the SimClock) against the
// closed forms of research/metastability.md §10, at loads up to ρ = 0.9, within 3%.
// Sample sizes grow with the load (waits at ρ = 0.9 are correlated over hundreds of
// requests); each check also prints the run's own standard error (batch means).

test('the closed forms reproduce the check values of research/metastability.md §10', () => {
  const near = (x: number, y: number, d = 5e-5): void => assert.ok(Math.abs(x - y) < d, `${x} vs ${y}`);
  near(erlangC(1, 0.8), 0.8);
  near(erlangC(5, 4), 0.5541);
  near(erlangC(10, 8), 0.4092);
  near(erlangC(50, 40), 0.087);
  near(erlangC(100, 80), 0.01965); // §10 says 0.0197; the exact value is 0.019646
  near(erlangC(5, 2.5), 0.13, 5e-4); // R12: 13.0 %
  near(erlangC(10, 5), 0.036, 5e-4); // R12: 3.6 %
  near(mmc(1, 0.8, 1).meanSojourn, 5);
  near(mmc(5, 4, 1).meanWait, 0.5541);
  near(mmc(10, 8, 1).meanWait, 0.2046);
  near(md1(0.5, 1).meanWait, 0.5); // half of M/M/1's 1.0
});

test('the M/M/c sojourn quantile inverts the tail: M/M/1 is exponential with rate μ − λ', () => {
  const near = (x: number, y: number, d = 1e-6): void => assert.ok(Math.abs(x - y) < d, `${x} vs ${y}`);
  // M/M/1: T ~ Exp(μ − λ), so its q-quantile is −ln(1 − q) / (μ − λ).
  near(mmcSojournQuantile(1, 0.8, 1, 0.99), Math.log(100) / 0.2);
  near(mmcSojournQuantile(1, 0.5, 1, 0.5), Math.log(2) / 0.5);
  // M/M/c: the tail at the quantile is 1 − q, at light and heavy load.
  for (const [c, lambda, mu] of [
    [6, 280, 50],
    [8, 100, 50],
    [4, 3.9, 1],
  ] as const)
    for (const q of [0.5, 0.9, 0.99])
      near(mmcSojournTail(c, lambda, mu, mmcSojournQuantile(c, lambda, mu, q)), 1 - q, 1e-9);
  // Past capacity there is no stationary quantile.
  assert.equal(mmcSojournQuantile(2, 3, 1, 0.99), Infinity);
});

const SAMPLES: Record<string, number> = { '0.5': 300_000, '0.7': 500_000, '0.9': 2_500_000 };

function within3(what: string, got: { value: number; se: number }, want: number): string {
  const err = got.value / want - 1;
  const line = `${what}: ${got.value.toPrecision(5)} vs ${want.toPrecision(5)} (${(100 * err).toFixed(2)}%, SE ${((100 * got.se) / want).toFixed(2)}%)`;
  assert.ok(Math.abs(err) <= 0.03, line);
  return line;
}

for (const [name, workers, dist] of [
  ['M/M/1', 1, 'exponential'],
  ['M/M/4', 4, 'exponential'],
  ['M/D/1', 1, 'constant'],
] as const)
  for (const rho of [0.5, 0.7, 0.9])
    test(`${name} at ρ = ${rho}: P(wait) and mean wait within 3% of ${dist === 'constant' ? 'Pollaczek–Khinchine' : 'Erlang C'}`, async (t) => {
      const meanMs = 10;
      const mu = 1 / meanMs;
      const lambda = rho * workers * mu;
      const r = await runQueue({
        workers,
        work: { dist, meanMs },
        lambdaPerMs: lambda,
        n: SAMPLES[String(rho)]!,
        warmup: 20_000,
        seed: 42,
      });
      const want = dist === 'constant' ? md1(lambda, mu) : mmc(workers, lambda, mu);
      t.diagnostic(within3('P(wait)', r.pWait, want.pWait));
      t.diagnostic(within3('mean wait (ms)', r.meanWaitMs, want.meanWait));
      t.diagnostic(within3('mean sojourn (ms)', r.meanSojournMs, want.meanSojourn));
      t.diagnostic(`${r.events} events in ${Math.round(r.wallMs)} ms`);
    });
