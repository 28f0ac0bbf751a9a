import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir } from '../helpers/cli.js';
import { readSeries } from '../helpers/experiment.js';
import { runOnce } from '../../orchestrator/run/runOnce.js';
import { StatusLine } from '../../orchestrator/run/status.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { planRun } from '../../orchestrator/spec/plan.js';
import { Journal } from '../../orchestrator/trigger/journal.js';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';

registerRuntimes();

// Issue 17, point 8: each status update shows the last complete second exactly as
// timeseries.csv records it. A short run on the local lab (real processes over
// loopback), with retries and a pause so attempts, amplification and in-flight move.
const EXPERIMENT = `name: status-line
lab: { api: { workers: 4, work: { dist: exponential, mean: 10ms } } }
load: { arrival: poisson, rate: 150/s }
client: { timeout: 200ms, retry: { policy: immediate, maxAttempts: 3 } }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 1s }, observe: 3s }
recovery: { within: 3x, tolerance: 20%, window: 1s, hold: 1s }
seed: 7
`;

const LINE =
  /second (\d+): offered (\d+) {2}attempts (\d+) {2}goodput (\d+) {2}amp (\S+) {2}p99 (–|\S+ ms) {2}in-flight (\d+)$/;

test('every status update shows the last complete second as timeseries.csv has it', async () => {
  const dir = tempDir('status');
  const plan = planRun(parseExperiment(EXPERIMENT, 'status.yaml'), { scale: 1, run: 1 });
  // A terminal, so every update is kept (not one line in 5 s).
  const written: string[] = [];
  const out = { isTTY: true, write: (s: string) => written.push(s) > 0 };
  await runOnce(plan, join(dir, 'run-1'), {
    journal: new Journal(join(dir, 'journal')),
    status: new StatusLine(out as unknown as NodeJS.WriteStream),
    stop: new AbortController().signal,
    runtime: 'local',
  });
  const updates = written
    .join('')
    .split('\r\x1b[K')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('[status-line]'));
  assert.ok(updates.length >= 5, updates.join('\n'));

  const rows = new Map(readSeries(dir).map((r) => [r['t_s'] as number, r]));
  const shown = new Set<number>();
  let previous = -1;
  for (const u of updates) {
    if (u.includes('second –: not complete yet')) {
      assert.equal(shown.size, 0, `no second after one was shown: ${u}`);
      continue;
    }
    const m = LINE.exec(u);
    assert.ok(m, `a status update with a second's figures: ${u}`);
    const [, t, offered, attempts, goodput, amp, p99, inFlight] = m;
    const second = Number(t);
    assert.ok(second >= previous, `seconds never go back: ${u}`);
    previous = second;
    shown.add(second);
    const row = rows.get(second);
    assert.ok(row, `timeseries.csv has second ${second}`);
    const cell = (c: string): string => (row[c] === null ? '–' : String(row[c]));
    assert.deepEqual(
      {
        offered: Number(offered),
        attempts: Number(attempts),
        goodput: Number(goodput),
        amp,
        p99,
        inFlight: Number(inFlight),
      },
      {
        offered: row['offered'],
        attempts: row['attempts'],
        goodput: row['goodput'],
        amp: cell('amplification_client'),
        p99: row['response_p99_ms'] === null ? '–' : `${cell('response_p99_ms')} ms`,
        inFlight: row['in_flight'],
      },
      `second ${second}: ${u}`,
    );
  }
  // The run lasts 7 s: most of its seconds were shown, the pause's retries among them.
  assert.ok(shown.size >= 4, [...shown].join(','));
  assert.ok(
    [...shown].some((s) => Number(rows.get(s)!['attempts']) > Number(rows.get(s)!['offered'])),
    `a second with retries was shown: ${[...shown].join(',')}`,
  );
});
