import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateRuns } from '../analysis/aggregate.js';
import type { RunSummary } from '../analysis/summary.js';
import { results, runData, summary } from '../../test/helpers/reportData.js';
import { renderMarkdown, reportSections } from './markdown.js';
import { renderHtml } from './html.js';
import { reportFigures } from './writeReport.js';
import { compareSections, compareSides } from './compare.js';

/** A run that failed the schedule-lag check (check 4): value 37.2 ms against a limit of 10 ms. */
function invalidLag(over: Partial<RunSummary> = {}): Partial<RunSummary> {
  const v = summary().validity;
  const lag = {
    check: 'lag' as const,
    what: 'schedule lag p99 of first attempts, ms',
    value: 37.2,
    limit: 10,
  };
  return {
    validity: {
      ...v,
      valid: false,
      checks: v.checks.map((c) => (c.check === 'lag' ? { ...lag, ok: false } : c)),
      failed: [lag],
    },
    outcome: 'invalid',
    outcomeReason: 'invalid run: schedule lag p99 of first attempts, ms: 37.2 (limit 10)',
    sustainingEffect: null,
    trend: null,
    recovered: false,
    recoveryTimeS: null,
    metastable: null,
    ...over,
  };
}

/** The body of the report after the title, up to the header table. */
function lead(md: string): string {
  return md.slice(md.indexOf('\n') + 1, md.indexOf('| | |'));
}

test('an invalid run’s report leads with its failed checks, value and limit, and gives no recovered/metastable verdict', () => {
  const x = results([runData(1, undefined, invalidLag())]);
  const md = renderMarkdown(x);
  const top = lead(md);
  assert.match(top, /Invalid run: no verdict is given/);
  assert.match(top, /- schedule lag p99 of first attempts, ms: 37\.2 \(limit 10\)/);
  // No verdict anywhere: not in the lead, the after-trigger table or the verdicts.
  assert.doesNotMatch(md, /\*\*(metastable|recovered|recovered-late|not-recovered)\*\*/);
  assert.doesNotMatch(md, /not metastable|Outcome: /);
  assert.match(md, /\| 1 \| 4–6 \| \*\*invalid\*\* \(no verdict\) \| no verdict \(invalid run\) \|/);
  // Measurement quality lists every check with value, limit and result.
  const q = md.slice(md.indexOf('## Measurement quality'));
  assert.match(
    q,
    /\| 1 \| every origin offered has exactly one outcome \| 100000 recorded of 100000 offered \| recorded = offered \| ok \|/,
  );
  assert.match(q, /\| 1 \| schedule lag p99 of first attempts, ms \| 37\.2 \| 10 \| \*\*failed\*\* \|/);
  // The late sends and schedule lag are reported whatever the checks say.
  assert.match(q, /\| 5 \(0\.01%\) \| 0\.900 ms \(n=100\) \|/);
  // report.html leads the same way: the first thing after the title.
  const html = renderHtml('retry-storm', reportSections(x));
  const body = html.slice(html.indexOf('<h1>'));
  assert.ok(body.indexOf('Invalid run: no verdict is given') < body.indexOf('<table>'));
  assert.ok(body.indexOf('Invalid run: no verdict is given') < body.indexOf('<h2>'));
});

test('a valid run’s report states its outcome first, with its evidence', () => {
  const md = renderMarkdown(results([runData(1)]));
  const top = lead(md);
  assert.match(top, /^\s*\*\*Outcome: metastable\.\*\* Not recovered by the end of the observation/);
  assert.match(top, /1,150 attempts\/s against a capacity of 400\/s/);
  assert.match(md, /\| run \| check \| value \| limit \| result \|/);
});

test('a not-recovered report gives the projected recovery time and says to observe longer', () => {
  const md = renderMarkdown(
    results([
      runData(1, undefined, {
        outcome: 'not-recovered',
        outcomeReason:
          'not recovered by the end of the observation (36 s after the trigger), but recovering: over the last 12 s goodput rises 4.5/s per s; at that pace it would recover about 61.2 s after the trigger: observe longer',
        projectedRecoveryS: 61.2,
        metastable: false,
      }),
    ]),
  );
  assert.match(lead(md), /\*\*Outcome: not-recovered\.\*\*.*about 61\.2 s after the trigger: observe longer/);
  assert.match(md, /\| not-recovered \| not recovered \(projected about 61\.2 s\) \|/);
  assert.doesNotMatch(md, /\*\*metastable\*\*/);
});

test('an interrupted run that never reached its trigger has no trigger window, recovery line or recovery marker', () => {
  const x = results([
    runData(1, undefined, {
      ...invalidLag(),
      usable: false,
      trigger: { kind: 'pause', target: 'api', startS: 4, endS: 6, applied: false },
      triggers: [],
      afterTrigger: {
        ...summary().afterTrigger,
        seconds: 0,
        offeredPerS: null,
        goodputPerS: null,
        amplification: null,
      },
      observedAfterS: 0,
    }),
  ]);
  const md = renderMarkdown(x);
  assert.match(lead(md), /The run ended before the trigger \(planned at 4–6 s\)/);
  const after = md.slice(
    md.indexOf('## After the trigger'),
    md.indexOf('## ', md.indexOf('## After the trigger') + 3),
  );
  assert.doesNotMatch(after, /recovery time|\| run \| seconds \|/);
  assert.match(after, /ended before the trigger/);
  assert.match(md, /\*\*Trigger\*\*: .*\(not reached: the run ended before it\)/);
  assert.doesNotMatch(md, /recovered after|not recovered/);
  // Its figures shade no trigger window and mark no recovery or deadline.
  const specs = JSON.stringify(reportFigures(x).runs.map((f) => f.spec));
  assert.doesNotMatch(specs, /"label":"trigger"|recovery deadline|recovered after/);
});

test('a restart’s time to healthy is reported on its own under After the trigger', () => {
  const md = renderMarkdown(
    results([
      runData(1, undefined, {
        triggers: [{ kind: 'kill', target: 'api', startS: 4, endS: 4.2, restartHealthyS: 1.8 }],
      }),
    ]),
  );
  assert.match(md, /kill api: the restart took 1\.8 s to become healthy/);
});

test('repetitions aggregate valid runs only: metastable 2/2 and invalid 1 with its reason', () => {
  const runs = [
    runData(1, undefined, { afterTrigger: { ...summary().afterTrigger, goodputPerS: 2 } }),
    runData(2, undefined, { afterTrigger: { ...summary().afterTrigger, goodputPerS: 4 } }),
    runData(3, undefined, invalidLag({ afterTrigger: { ...summary().afterTrigger, goodputPerS: 300 } })),
  ];
  const a = aggregateRuns(runs.map((r) => r.summary));
  assert.deepEqual(a.metastable, { true: 2, false: 0, unmeasured: 0, of: 2 });
  assert.equal(a.validRuns, 2);
  assert.equal(a.runs, 3);
  assert.deepEqual(a.invalid, { runs: 1, which: [3], because: { lag: 1 } });
  assert.equal(a.outcomeCounts.metastable, 2);
  assert.equal(a.outcomeCounts.invalid, 1);
  assert.equal(a.outcomeSummary, 'metastable 2/2; invalid 1 (schedule lag)');
  // The invalid run's 300/s is left out of the figures.
  const fig = a as unknown as { afterTrigger: { goodputPerS: { mean: number; count: number } } };
  assert.equal(fig.afterTrigger.goodputPerS.mean, 3);
  assert.equal(fig.afterTrigger.goodputPerS.count, 2);

  const x = results(runs, { aggregate: a });
  const md = renderMarkdown(x);
  assert.match(lead(md), /\*\*Outcome across 3 runs: metastable 2\/2; invalid 1 \(schedule lag\)\.\*\*/);
  assert.match(
    lead(md),
    /- run 3: \*\*invalid\*\*, no verdict: schedule lag p99 of first attempts, ms: 37\.2 \(limit 10\)/,
  );
  assert.match(
    md,
    /Across 3 runs: metastable 2\/2; invalid 1 \(schedule lag\); over the 2 valid runs, .*goodput after the trigger 3.00 req\/s/,
  );
  // The figures across runs draw the valid runs only.
  const across = reportFigures(x).runs.filter((f) => f.id.startsWith('runs-'));
  assert.ok(across.length > 0);
  for (const f of across)
    assert.deepEqual(
      f.series.filter((s) => s.startsWith('run ')),
      ['run 1', 'run 2'],
    );
});

test('Model vs bench and compare use outcomes', () => {
  const bench = results([runData(1)]);
  const sim = results([runData(1, undefined, invalidLag())]);
  const md = renderMarkdown({ ...bench, twin: sim });
  assert.match(md, /\| outcome \| \*\*metastable\*\* \| \*\*invalid\*\* \| \*\*they differ\*\* \|/);
  const cmp = compareSections(...compareSides({ folder: 'a', data: bench }, { folder: 'b', data: sim }));
  const v = cmp.find((s) => s.id === 'verdicts')!.body;
  assert.match(v, /\| outcome \| \*\*metastable\*\* \| \*\*invalid\*\* \(no verdict\) \|/);
});
