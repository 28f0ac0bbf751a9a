/**
 * CTMC benchmark (npm run bench:markov): the solve time and memory of the retry chain
 * (orchestrator/analysis/markov/) at about 10⁴ and 10⁵ states. Each size runs in a child
 * process of its own so that its peak RSS is its own; the child builds the chain of an
 * eight-worker server in collapse's reach (workers 8, 50/s each, timeout 0.5 s, 3 retries,
 * λ 280/s: retry-storm's system) with the queue × orbit bounds given, then solves the
 * stationary distribution and both mean first-passage times (recovery and collapse).
 * It prints figures; it asserts nothing. The solvers are exact block eliminations,
 * O(levels × width³): width (the orbit) is the cost, levels (the queue) are linear.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { maxExitRate } from '../orchestrator/analysis/markov/generator.js';
import { meanFirstPassage, stationary } from '../orchestrator/analysis/markov/levels.js';
import {
  METAFOR_ALPHA,
  regionsOf,
  retryChain,
  type RetryChainParams,
} from '../orchestrator/analysis/markov/retryChain.js';
import { loadNow, RESULTS_DIR, writeGoals, type Goal } from './goals.js';

const SIZES: [string, number, number][] = [
  ['10^4 states (queue 250 × orbit 40)', 250, 40],
  ['10^5 states (queue 2000 × orbit 50)', 2000, 50],
  ['10^5 states (queue 1000 × orbit 100)', 1000, 100],
];

function child(queue: number, orbit: number): void {
  const p: RetryChainParams = {
    arrivalPerS: 280,
    workers: 8,
    serviceRatePerS: 50,
    timeoutS: 0.5,
    retries: 3,
    orbitWaitS: 0.5,
    queueSize: queue,
    orbitSize: orbit,
    alpha: METAFOR_ALPHA,
    granularity: 1,
  };
  const t0 = performance.now();
  const q = retryChain(p);
  const t1 = performance.now();
  const pi = stationary(q);
  const t2 = performance.now();
  const reg = regionsOf(p);
  const rec = meanFirstPassage(q, { below: reg.healthyBelow })[(queue - 1) * orbit]!;
  const col = meanFirstPassage(q, { atLeast: reg.collapsedFrom })[0]!;
  const t3 = performance.now();
  let mass = 0;
  for (const x of pi) mass += x;
  process.stdout.write(
    JSON.stringify({
      states: q.size,
      nonzeros: q.vals.length,
      buildMs: t1 - t0,
      stationaryMs: t2 - t1,
      passagesMs: t3 - t2,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
      check: { mass, recoveryS: rec, collapseS: col, maxExitRate: maxExitRate(q) },
    }),
  );
}

if (process.argv[2] === '--child') child(Number(process.argv[3]), Number(process.argv[4]));
else {
  const load = loadNow();
  const out: string[] = [];
  const say = (line: string): void => {
    out.push(line);
    console.log(line);
  };
  say(`# CTMC benchmark, ${new Date().toISOString().slice(0, 10)}`);
  say('');
  say(`Load average before: ${load.join(' ')}.`);
  say('');
  say('retry CTMC: build, stationary distribution, two mean first-passage times (one core each)');
  say('');
  const goals: Goal[] = [];
  for (const [name, queue, orbit] of SIZES) {
    const r = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', String(queue), String(orbit)],
      {
        encoding: 'utf8',
      },
    );
    if (r.status !== 0) throw new Error(`${name}: ${r.stderr}`);
    const x = JSON.parse(r.stdout) as {
      states: number;
      nonzeros: number;
      buildMs: number;
      stationaryMs: number;
      passagesMs: number;
      peakRssMiB: number;
    };
    const totalS = (x.buildMs + x.stationaryMs + x.passagesMs) / 1000;
    // Issue 21: "a solver that scales to ~10⁵ states in seconds".
    if (x.states >= 1e5)
      goals.push({
        figure: `CTMC, ${name}: build, stationary distribution, two first passages`,
        measured: `${totalS.toFixed(1)} s`,
        goal: '<= 10 s ("in seconds")',
        met: totalS <= 10,
      });
    say(
      `- ${name}: ${x.states} states, ${x.nonzeros} nonzeros; build ${x.buildMs.toFixed(0)} ms, stationary ${x.stationaryMs.toFixed(0)} ms, first passages ${x.passagesMs.toFixed(0)} ms, total ${(x.buildMs + x.stationaryMs + x.passagesMs).toFixed(0)} ms; peak RSS ${x.peakRssMiB.toFixed(0)} MiB`,
    );
  }
  writeGoals('markov', load, goals);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `markov-${new Date().toISOString().slice(0, 10)}.md`);
  writeFileSync(file, out.join('\n') + '\n');
  console.log(`written to ${file}`);
}
