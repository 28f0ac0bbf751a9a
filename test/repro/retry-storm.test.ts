import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/cli.js';
import { assertTwinAgrees } from '../helpers/twin.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { assertClaimed, suiteScale } from '../helpers/catalogue.js';
import { readEvents, reproRuntimeArgs } from '../helpers/experiment.js';

// The spine's acceptance: the storm at the suite's scale on the local lab (its control,
// retry-storm-no-retry, has a file of its own: retry-storm-no-retry.test.ts).

function run(file: string, out: string) {
  const name = file.replace(/^.*\//, '').replace(/\.yaml$/, '');
  return runCli(
    [
      'run',
      file,
      '--scale',
      String(suiteScale(name)),
      '--repeat',
      '1',
      '--out',
      out,
      '--quiet',
      ...reproRuntimeArgs(),
    ],
    { METABENCH_STATE_DIR: join(out, '..', 'state') },
  );
}

test('retry-storm is metastable: amplification >= 2 and goodput < 50% of baseline after the trigger', async () => {
  const out = join(tempDir('rs'), 'out');
  const r = await run('experiments/retry-storm.yaml', out);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  // Validity check 4 (DESIGN.md §2): a lab run's lateness is replayed in the simulation,
  // intended against actual send times, and the check carries the replay's verdict
  // (whether or not this machine kept the schedule).
  if (s.runtime !== 'sim') {
    const lag = s.validity.checks.find((c) => c.check === 'lag')!;
    assert.match(lag.what, /^the generator's lateness did not change the outcome/, JSON.stringify(lag));
    assert.match(
      String(lag.value),
      /^replay with the actual send times: [a-z-]+, .*; with the intended: [a-z-]+, .*: lateness (harmless|changed)/,
    );
    for (const f of [
      'lateness.bin.gz',
      'replay/intended/summary.json',
      'replay/actual/summary.json',
      'replay/lateness.json',
    ])
      assert.ok(existsSync(join(out, 'run-1', f)), f);
    assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /\| 1 \| actual \| [a-z-]+ \|/);
  }
  assert.equal(r.code, 0, r.stderr);
  assert.equal(s.experiment, 'retry-storm');
  assert.equal(s.offered, s.recorded);
  assert.equal(s.usable, true);
  assertClaimed('retry-storm', s);
  assert.equal(s.recovered, false);
  assert.ok(
    s.afterTrigger.amplification! >= 2,
    `client amplification after the trigger: ${s.afterTrigger.amplification}`,
  );
  assert.ok(
    s.afterTrigger.goodputPerS! < 0.5 * s.baseline.goodputPerS!,
    `goodput ${s.afterTrigger.goodputPerS} vs baseline ${s.baseline.goodputPerS}`,
  );
  // The server saw the amplified load too (scraped from its /metrics). It reads fewer
  // attempts than the client sent: an attempt abandoned before the api read it never arrives.
  assert.ok(
    s.afterTrigger.amplificationServer! > 1.5,
    `server amplification ${s.afterTrigger.amplificationServer}`,
  );
  assert.equal(s.trigger.kind, 'pause');
  const k = suiteScale('retry-storm');
  assert.ok(
    Math.abs(s.trigger.startS - 90 * k) < 0.5 && Math.abs(s.trigger.endS - 100 * k) < 0.5,
    JSON.stringify(s.trigger),
  );
  for (const f of [
    'report.md',
    'report.html',
    'figures/throughput.svg',
    'data/runs.csv',
    'run-1/manifest.json',
    'run-1/timeseries.csv',
    'run-1/events.arrow',
    'run-1/summary.json',
  ])
    assert.ok(existsSync(join(out, f)), f);
  const events = readEvents(out) as { e: string; action?: string }[];
  assert.equal(events.filter((e) => e.e === 'attempt').length, s.attempts);
  assert.equal(events.filter((e) => e.e === 'outcome').length, s.offered);
  assert.deepEqual(
    events.filter((e) => e.e === 'trigger').map((e) => e.action),
    ['apply', 'undo'],
  );
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /\*\*metastable\*\*/);
  await assertTwinAgrees('experiments/retry-storm.yaml', s);
});
