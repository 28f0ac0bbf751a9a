import { test } from 'node:test';
import assert from 'node:assert/strict';
import { results, runData, summary } from '../../test/helpers/reportData.js';
import { renderMarkdown, reportSections, reportTitle } from './markdown.js';
import { renderHtml } from './html.js';
import type { SweepTable } from './tables.js';

test('report.md puts the sample count beside every percentile and says unmeasured for an empty window', () => {
  const md = renderMarkdown(results([runData(1)]));
  assert.match(
    md,
    /\| 18\.2 ms \(n=3335\) \| 52\.2 ms \(n=3335\) \| 103 ms \(n=3335\) \| 167 ms \(n=3335\) \|/,
  );
  assert.match(md, /unmeasured \(n=0\) \| unmeasured \(n=0\) \| unmeasured \(n=0\) \| unmeasured \(n=0\)/);
  assert.match(md, /\| 4\.05× \| unmeasured \|/); // server-side amplification not scraped
  assert.match(md, /\| 0\.900 ms \(n=100\) \|/); // schedule lag p99 with its count
  const verdicts = md.indexOf('## Verdicts');
  assert.ok(verdicts > md.indexOf('## After the trigger'));
  assert.match(md.slice(verdicts), /\| p99 \| baseline \| `<= 400ms` \| – \| 0 \| \*\*unmeasured\*\* \|/);
  assert.match(md.slice(verdicts), /\*\*metastable\*\*: not recovered by the end of the observation \(36 s/);
  assert.match(md, /Test CPU, 2 cores/);
});

test('report sections come in the reader’s order, the header first and the verdicts last', () => {
  const ids = reportSections(results([runData(1, undefined, { warnings: ['something odd'] })])).map(
    (s) => s.id,
  );
  assert.deepEqual(ids, [
    'header',
    'warnings',
    'what-ran',
    'baseline',
    'after-trigger',
    'policies',
    'quality',
    'verdicts',
  ]);
  const md = renderMarkdown(results([runData(1)]));
  for (const field of [
    'machine',
    'OS',
    'Node',
    'runtime',
    'lab topology',
    'date',
    'seed',
    'scale',
    'git revision',
  ])
    assert.match(md, new RegExp(`\\| ${field} \\| .+ \\|`), field);
});

test('warnings open the report, before what ran, and an unusable run says so', () => {
  const md = renderMarkdown(
    results([runData(1, undefined, { usable: false, offered: 100, recorded: 98, lateSends: 0 })]),
  );
  const w = md.indexOf('## Warnings');
  assert.ok(w > 0 && w < md.indexOf('## What ran'));
  assert.match(md, /\*\*This run is unusable\*\*/);
  assert.match(md, /offered \(100\) != recorded \(98\)/);
});

test('without warnings there is no warnings section', () => {
  assert.doesNotMatch(renderMarkdown(results([runData(1)])), /## Warnings/);
});

test('report.md shows the counters of the client policies the client used, and only those', () => {
  const base = summary().policies;
  const md = renderMarkdown(
    results([
      runData(1, undefined, {
        policies: {
          ...base,
          retriesDeniedByBudget: 1234,
          breakerOpens: 3,
          breakerRejected: 800,
          breakerOpenS: 4.5,
          hedgesSent: 0,
          hedgesWon: 0,
          hedgesDenied: 0,
          cancelledAttempts: 17,
          abandoned: 9,
        },
      }),
    ]),
  );
  const section = md.slice(md.indexOf('## Client policies'), md.indexOf('## Measurement quality'));
  assert.ok(md.indexOf('## Client policies') > 0, md);
  assert.match(section, /\| retries denied by the budget \| 1234 \|/);
  assert.match(section, /\| breaker opens \| 3 \|/);
  assert.match(section, /\| cancelled attempts \| 17 \|/);
  assert.match(section, /\| abandoned origins \| 9 \|/);
  assert.doesNotMatch(section, /hedges sent/); // a policy that did nothing is not a row
  assert.doesNotMatch(section, /throttling/); // nor one the client did not use
  // The client line describes the whole model.
  assert.match(
    md,
    /\*\*Client\*\*: per-attempt timeout 500ms, retry immediate up to 4 attempts, deadline none\./,
  );
});

test('a run without policy counters (a summary from before them) has no client policies section', () => {
  const ids = reportSections(
    results([
      runData(1, undefined, { policies: undefined as unknown as ReturnType<typeof summary>['policies'] }),
    ]),
  ).map((s) => s.id);
  assert.ok(!ids.includes('policies'));
});

test('the verdict table names the window (with its span) and, for per-class thresholds, the class', () => {
  const md = renderMarkdown(
    results([
      runData(1, undefined, {
        hypothesis: [
          {
            metric: 'p99',
            window: 'baseline',
            threshold: '<= 400ms',
            value: 103.4,
            samples: 3335,
            verdict: 'pass',
            span: { startS: 2, endS: 4 },
          },
          {
            metric: 'errorRatio',
            window: 'baseline',
            class: 'heavy',
            threshold: '<= 1%',
            value: 0.002,
            samples: 600,
            verdict: 'pass',
            span: { startS: 2, endS: 4 },
          },
          {
            metric: 'p99',
            window: 'afterRecovery',
            threshold: '<= 400ms',
            value: null,
            samples: 0,
            verdict: 'unmeasured',
            span: null,
            note: 'no recovery point: not recovered within the observed 36 s',
          },
        ],
      }),
    ]),
  );
  const v = md.slice(md.indexOf('## Verdicts'));
  assert.match(v, /\| run \| metric \| class \| window \| threshold \| value \| samples \| verdict \|/);
  assert.match(
    v,
    /\| 1 \| p99 \| all \| baseline \(2–4 s\) \| `<= 400ms` \| 103 ms \| 3335 \| \*\*pass\*\* \|/,
  );
  assert.match(
    v,
    /\| 1 \| errorRatio \| heavy \| baseline \(2–4 s\) \| `<= 1%` \| 0\.200% \| 600 \| \*\*pass\*\* \|/,
  );
  assert.match(v, /\| 1 \| p99 \| all \| after recovery \| `<= 400ms` \| – \| 0 \| \*\*unmeasured\*\* \|/);
  assert.match(
    v,
    /- run 1: no recovery point: not recovered within the observed 36 s: unmeasured after recovery\./,
  );
});

test('what ran says when % capacity used a measured capacity, and where it came from', () => {
  const md = renderMarkdown(
    results([
      runData(1, undefined, {
        capacity: {
          nominalPerS: 400,
          measuredPerS: 371,
          usedPerS: 371,
          source: 'measured',
          from: 'measured by metabench calibrate on 2026-12-01T10:00:00.000Z (/state/c.json)',
          calibration: null,
        },
      }),
    ]),
  );
  assert.match(
    md,
    /nominal capacity 400 req\/s; `% capacity` used the measured 371 req\/s \(measured by metabench calibrate on 2026-12-01T10:00:00\.000Z \(\/state\/c\.json\)\)\./,
  );
  assert.doesNotMatch(renderMarkdown(results([runData(1)])), /used the measured/);
});

test('the request classes section shows each class’s thresholds with its verdicts in both windows, from the hypothesis', () => {
  const win = (origins: number) => ({
    origins,
    ok: origins,
    failed: 0,
    cancelled: 0,
    errorRatio: origins ? 0 : null,
    failures: {},
    responseMs: { samples: origins, p50: 10, p95: 20, p99: 30 },
    ttftMs: { samples: 0, p50: null, p95: null, p99: null },
    itlMs: { samples: 0, p50: null, p95: null, p99: null },
  });
  const h = (metric: string, window: string, value: number | null, verdict: string, samples = 60) => ({
    metric,
    window,
    class: 'chat',
    threshold: metric === 'errorRatio' ? '<= 1%' : '<= 1500ms',
    value,
    samples: value === null ? 0 : samples,
    verdict,
    span: null,
  });
  const md = renderMarkdown(
    results([
      runData(1, undefined, {
        hypothesis: [
          h('errorRatio', 'baseline', 0.005, 'pass'),
          h('ttftP95', 'baseline', 900, 'pass'),
          h('errorRatio', 'afterRecovery', 0.04, 'fail'),
          h('ttftP95', 'afterRecovery', null, 'unmeasured'),
        ],
        classes: {
          definitions: 'TTFT: from sending the attempt.',
          classes: [
            {
              name: 'chat',
              windows: { warmup: win(0), baseline: win(60), trigger: win(0), observe: win(0) },
            },
          ],
        },
      } as unknown as Partial<ReturnType<typeof summary>>),
    ]),
  );
  const section = md.slice(md.indexOf('## Request classes'), md.indexOf('## Verdicts'));
  assert.match(section, /\| chat \| baseline \| 60 \| 60 \| 0 \| 0 \| 0\.00% \|/);
  assert.match(section, /\| class \| metric \| threshold \| baseline \| after recovery \|/);
  assert.match(
    section,
    /\| chat \| errorRatio \| `<= 1%` \| 0\.5% \(n=60\) \*\*pass\*\* \| 4% \(n=60\) \*\*fail\*\* \|/,
  );
  assert.match(
    section,
    /\| chat \| ttftP95 \| `<= 1500ms` \| 900 ms \(n=60\) \*\*pass\*\* \| – \(n=0\) \*\*unmeasured\*\* \|/,
  );
  assert.match(
    md.slice(md.indexOf('## Verdicts')),
    /run 1: request-class thresholds \(both windows\): \*\*fail\*\*/,
  );
});

test('a sweep’s report is titled with the sweep’s name, its table sorted by level with 95% CIs', () => {
  const sweep: SweepTable = {
    name: 'retry-storm-rate',
    design: 'one-at-a-time',
    factors: [{ name: 'load.rate', unit: 'as written', reference: '70% capacity' }],
    figures: [{ name: 'goodput after', unit: 'req/s' }],
    // In run order: the reference point first.
    rows: [70, 20, 90].map((r) => ({
      ...(r !== 70 ? { varied: 'load.rate' } : {}),
      factors: { 'load.rate': `${r}% capacity` },
      figures: { 'goodput after': r === 20 ? 12 : 0 },
      perRun: { 'goodput after': r === 20 ? [10, 14] : [0, 0] },
      verdict: r === 20 ? ('recovered' as const) : ('metastable' as const),
    })),
  };
  const x = results([runData(1)], { sweep });
  const md = renderMarkdown(x);
  assert.match(md, /^# Sweep retry-storm-rate\n/);
  assert.match(md, /A sweep of the experiment \*\*retry-storm\*\*/);
  const rows = md.split('\n').filter((l) => /^\| \d+% capacity \|/.test(l));
  assert.deepEqual(
    rows.map((l) => l.split(' | ')[0]),
    ['| 20% capacity', '| 70% capacity', '| 90% capacity'],
  );
  // 12 ± t(0.975, 1) × 2 = [−13.4, 37.4].
  assert.match(rows[0]!, /\| 12\.0 req\/s \[-13\.4, 37\.4\] \| \*\*recovered\*\*/);
  assert.doesNotMatch(md, /### Factorial effects/); // one-at-a-time: no effects
  assert.match(renderHtml(reportTitle(x), reportSections(x)), /<title>Sweep retry-storm-rate<\/title>/);
});

test('a two-factor factorial sweep’s report has the effects table, its values those of the linear model', () => {
  // The 2×2 of orchestrator/analysis/effects.test.ts: effects 18, 12 and 8, each with SE 1.
  const cells: [number, string, number[]][] = [
    [1, 'off', [10, 12]],
    [1, 'on', [14, 16]],
    [4, 'off', [20, 22]],
    [4, 'on', [40, 42]],
  ];
  const sweep: SweepTable = {
    name: 'retries-x-shed',
    design: 'grid',
    factors: [
      { name: 'client.retry.maxAttempts', unit: 'value' },
      { name: 'shed', unit: 'as written' },
    ],
    figures: [
      { name: 'goodput after', unit: 'req/s' },
      { name: 'p99 after', unit: 'ms' },
    ],
    rows: cells.map(([a, b, ys]) => ({
      factors: { 'client.retry.maxAttempts': a, shed: b },
      figures: { 'goodput after': (ys[0]! + ys[1]!) / 2, 'p99 after': null },
      perRun: { 'goodput after': ys, 'p99 after': [null, null] },
      verdict: 'recovered' as const,
    })),
  };
  const md = renderMarkdown(results([runData(1)], { sweep }));
  const at = md.indexOf('### Factorial effects');
  assert.ok(at > md.indexOf('## Sweep'));
  const effects = md.slice(at);
  assert.match(
    effects,
    /client\.retry\.maxAttempts coded −1 at 1 and \+1 at 4, shed coded −1 at off and \+1 at on/,
  );
  assert.match(
    effects,
    /\| goodput after \(req\/s\) \| client\.retry\.maxAttempts \| \+18\.0 \| 1\.00 \| \[15\.2, 20\.8\] \| 8 \|/,
  );
  assert.match(
    effects,
    /\| goodput after \(req\/s\) \| shed \| \+12\.0 \| 1\.00 \| \[9\.22, 14\.8\] \| 8 \|/,
  );
  assert.match(
    effects,
    /\| goodput after \(req\/s\) \| client\.retry\.maxAttempts × shed \| \+8\.00 \| 1\.00 \| \[5\.22, 10\.8\] \| 8 \|/,
  );
  assert.match(effects, /- p99 after: no effects estimated: no valid run measured it\./);
});
