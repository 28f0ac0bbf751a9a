import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateRuns } from '../analysis/aggregate.js';
import type { RunSummary } from '../analysis/summary.js';
import { csv, results, runData, summary } from '../../test/helpers/reportData.js';
import { synth } from '../../test/helpers/outcomeSynth.js';
import { outcomeParagraph } from '../export/latex/outcome.js';
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

const STORM = {
  name: 'load-above-capacity' as const,
  figure: 'the api receives 1,120/s against a capacity of 400/s (amplification 4)',
  threshold: 'requests received per second ≥ the capacity (400/s)',
  met: true,
};

test('a metastable report names the mechanism with its figure, threshold and the figures that show it', () => {
  const md = renderMarkdown(results([runData(1, undefined, { mechanisms: [STORM] })]));
  assert.match(
    lead(md),
    /Sustained by: load ≥ capacity — the api receives 1,120\/s against a capacity of 400\/s \(amplification 4\) \(threshold: requests received per second ≥ the capacity \(400\/s\)\)\. Shown in figures\/throughput\.svg, figures\/amplification\.svg\./,
  );
  // report.html says the same in its lead.
  const html = renderHtml(
    'retry-storm',
    reportSections(results([runData(1, undefined, { mechanisms: [STORM] })])),
  );
  assert.match(html, /Sustained by: load ≥ capacity — the api receives 1,120\/s/);
  // The figures named are the report's own.
  const ids = reportFigures(results([runData(1, undefined, { mechanisms: [STORM] })])).runs.map((f) => f.id);
  assert.ok(ids.includes('throughput') && ids.includes('amplification'), ids.join(' '));
  // Several runs: each run's figures carry its prefix.
  const two = renderMarkdown(
    results([runData(1, undefined, { mechanisms: [STORM] }), runData(2, undefined, { mechanisms: [STORM] })]),
  );
  assert.match(
    two,
    / {2}- Sustained by: load ≥ capacity — .* Shown in figures\/run-2-throughput\.svg, figures\/run-2-amplification\.svg\./,
  );
});

test('a cold cache names the cache and database figures; error paths name the column that holds their share', () => {
  const cold = {
    name: 'cold-cache' as const,
    figure: 'cache hit ratio 16.7% (baseline 100%), the database saturated (99.7% of its connections busy)',
    threshold: 'hit ratio more than 20 points under the baseline’s, with the database saturated',
    met: true,
  };
  const text = csv(12, {
    cache_hit_ratio: (i) => (i < 4 ? 1 : 0.17),
    db_pool_waiting: (i) => (i < 4 ? 0 : 3),
    db_pool_busy: (i) => (i < 4 ? 2 : 8),
  });
  const md = renderMarkdown(
    results([
      runData(1, text, {
        mechanisms: [{ ...STORM, met: false }, cold],
        sustainingEffect: cold.figure,
      }),
    ]),
  );
  assert.match(
    lead(md),
    /Sustained by: cold cache with the database saturated — cache hit ratio 16\.7%.* Shown in figures\/cache\.svg, figures\/db\.svg, column db_pool_busy of timeseries\.csv\./,
  );
  assert.doesNotMatch(lead(md), /Sustained by: load ≥ capacity/);
  const errors = {
    name: 'error-path' as const,
    figure: 'the workers spend 100% of their time on error paths',
    threshold: '≥ 20% of the workers’ time',
    met: true,
  };
  const md2 = renderMarkdown(
    results([
      runData(1, csv(12, { error_path_seconds_timeout: (i) => (i < 4 ? 0 : 8) }), { mechanisms: [errors] }),
    ]),
  );
  assert.match(
    lead(md2),
    /Sustained by: error paths — the workers spend 100% of their time on error paths \(threshold: ≥ 20% of the workers’ time\)\. Shown in figures\/failures\.svg, column error_path_seconds_timeout of timeseries\.csv\./,
  );
});

test('not-recovered with no mechanism met says "no sustaining effect found" with what was measured; with a trend, the projection and its interval', () => {
  const flat = renderMarkdown(
    results([
      runData(1, undefined, {
        outcome: 'not-recovered',
        metastable: false,
        outcomeReason:
          'not recovered by the end of the observation (36 s after the trigger), and over the last 12 s goodput shows no upward trend, but no sustaining effect found: the client sends 279.6 attempts/s against a capacity of 400/s (amplification 1) (threshold: attempts sent per second ≥ the capacity (400/s))',
        sustainingEffect: null,
        mechanisms: [
          {
            ...STORM,
            figure: 'the client sends 279.6 attempts/s against a capacity of 400/s (amplification 1)',
            met: false,
          },
        ],
      }),
    ]),
  );
  assert.match(
    lead(flat),
    /No sustaining effect found, so not metastable: the client sends 279\.6 attempts\/s against a capacity of 400\/s \(amplification 1\) \(threshold: requests received per second ≥ the capacity \(400\/s\)\)\./,
  );
  assert.doesNotMatch(flat, /Sustained by/);
  assert.match(flat, /\| not-recovered \| not recovered \(no sustaining effect found\) \|/);
  const rising = renderMarkdown(
    results([
      runData(1, undefined, {
        outcome: 'not-recovered',
        metastable: false,
        outcomeReason: 'not recovered by the end of the observation (36 s after the trigger), but recovering',
        sustainingEffect: null,
        projectedRecoveryS: 61.2,
        projection: { basis: 'goodput', atS: 61.2, lowS: 50.5, highS: 80 },
        mechanisms: [],
      }),
    ]),
  );
  assert.match(
    lead(rising),
    /Projection: goodput would reach the recovery threshold about 61\.2 s after the trigger \(95% interval 50\.5–80 s\): observe longer\./,
  );
  assert.match(rising, /\| not recovered \(projected about 61\.2 s, 95% interval 50\.5–80\) \|/);
  const draining = renderMarkdown(
    results([
      runData(1, undefined, {
        outcome: 'not-recovered',
        metastable: false,
        outcomeReason: 'not recovered by the end of the observation (36 s after the trigger), but recovering',
        sustainingEffect: null,
        projection: { basis: 'backlog', atS: 200, lowS: 180, highS: null },
        mechanisms: [],
      }),
    ]),
  );
  assert.match(
    lead(draining),
    /no recovery time is projected; the backlog would empty about 200 s after the trigger \(95% interval 180–never\)/,
  );
});

test('a report judged by the default steady state says so, in the lead and above the hypothesis table; a declared one does not', () => {
  const hypothesis = [
    {
      metric: 'goodput',
      window: 'baseline' as const,
      threshold: '>= 95% offered (default)',
      value: 0.998,
      samples: 3336,
      verdict: 'pass' as const,
      default: true as const,
    },
    {
      metric: 'p99 growth',
      window: 'baseline' as const,
      threshold: 'not growing (default: …)',
      value: 3.1,
      samples: 30,
      verdict: 'pass' as const,
      default: true as const,
    },
  ];
  const md = renderMarkdown(results([runData(1, undefined, { hypothesis })]));
  assert.match(
    lead(md),
    /Steady state: no hypothesis was declared, so the default one applied \(goodput ≥ 95% of offered, backlog and p99 not growing over the baseline; docs\/hypotheses\.md\): it held in the baseline\./,
  );
  assert.match(
    md,
    /No steady-state hypothesis was declared: the default one was judged instead \(goodput ≥ 95% of offered/,
  );
  const declared = renderMarkdown(results([runData(1)]));
  assert.doesNotMatch(declared, /default one/);
});

test('from synthetic series to the report: a storm with amplification 4 is metastable naming the load, with its figure', () => {
  const { s } = synth({
    good: (t) => (t < 40 ? 1 : 0.3),
    amp: (t) => (t < 40 ? 1 : 4),
    backlog: (t) => (t < 40 ? 0 : 500),
    hypothesis: '',
  });
  assert.equal(s.outcome, 'metastable', s.outcomeReason);
  const x = results([{ ...runData(1), summary: s }]);
  const top = lead(renderMarkdown(x));
  assert.match(
    top,
    /Sustained by: load ≥ capacity — the client sends 400 attempts\/s against a capacity of 400\/s \(amplification 4\) \(client-side: no server metrics\) \(threshold: attempts sent per second ≥ the capacity \(400\/s\)\)\. Shown in figures\/throughput\.svg/,
  );
  assert.match(
    top,
    /Steady state: no hypothesis was declared, so the default one applied .*: it held in the baseline\./,
  );
  // The same lines in LaTeX, with references to the exported figures.
  const p = outcomeParagraph([{ index: 1, summary: s }], x.runs);
  assert.match(
    p,
    /\\paragraph\{Outcome\.\} The run is metastable: sustained by load \$\\geq\$ capacity: the client sends 400 attempts\/s/,
  );
  assert.match(p, /shown in Figure~\\ref\{fig:throughput\}, Figure~\\ref\{fig:amplification\}/);
  assert.match(p, /the default one applied/);
  // A flat shortfall with amplification 1: not metastable, and the LaTeX says why.
  const flat = synth({ good: (t) => (t < 40 ? 1 : 0.3), backlog: (t) => (t < 40 ? 0 : 500) }).s;
  assert.equal(flat.outcome, 'not-recovered');
  assert.match(
    outcomeParagraph([{ index: 1, summary: flat }]),
    /no sustaining effect found, so it is not called metastable: the client sends 100 attempts\/s/,
  );
});
