import type { RunSummary } from '../../analysis/summary.js';
import { RETRY_ON } from '../../../bench/policy/retry.js';
import { apiReplicas, clientModel } from '../../run/client.js';
import type { Experiment } from '../../spec/schema.js';
import { table, type TableRun, type TexTable } from './tables.js';
import { count, duration, exact, si, tex } from './tex.js';

/**
 * tables/policies.tex: one row per client policy the run had, its settings as the client
 * was built from them (the resolved experiment's `client:` through the same client model
 * the run used, so defaults read as they ran) and what summary.json measured of it over
 * the whole run. A policy the experiment does not declare has no row.
 */

/** One cell item: a label and its LaTeX value (a setting), or its values per run (measured). */
export interface PolicyItem {
  readonly label: string;
  readonly value: string;
}

export interface PolicyRow {
  readonly policy: string;
  readonly settings: readonly PolicyItem[];
  readonly measured: readonly PolicyItem[];
}

const pct = (f: number): string => exact(f * 100, '\\percent');

/** A count per run, in run order, "/" between runs; "--" for a run that did not record it. */
function perRun(runs: readonly TableRun[], value: (s: RunSummary) => number | null | undefined): string {
  return runs.map((r) => count(value(r.summary))).join(' / ');
}

export function policyRows(e: Experiment, runs: readonly TableRun[]): PolicyRow[] {
  const c = e.client;
  const m = clientModel(c, apiReplicas(e));
  const p = (s: RunSummary) => s.policies;
  const rows: PolicyRow[] = [];
  const item = (label: string, value: string): PolicyItem => ({ label, value });
  // A declared word (a kind, a style), as LaTeX sets it literally.
  const word = (label: string, value: string): PolicyItem => item(label, tex(value));
  const measure = (label: string, value: (s: RunSummary) => number | null | undefined): PolicyItem =>
    item(label, perRun(runs, value));

  rows.push({
    policy: 'Timeout',
    settings: [item('per attempt', duration(m.timeoutMs))],
    measured: [measure('requests failed by timeout', (s) => s.outcomes.timeout)],
  });

  if (c.deadline !== undefined)
    rows.push({
      policy: 'Deadline',
      settings: [
        item('per request', duration(c.deadline)),
        item('propagated in x-deadline-ms', c.propagateDeadline ? 'yes' : 'no'),
      ],
      measured: [
        measure('answered after it', (s) => s.outcomes['deadline-exceeded']),
        measure('retries cut by it', (s) => p(s).retriesCutByDeadline),
      ],
    });

  const r = m.retry;
  const b = r.backoff;
  if (r.maxAttempts === 1)
    rows.push({ policy: 'Retries', settings: [item('max.\\ attempts', count(1))], measured: [] });
  else
    rows.push({
      policy: 'Retries',
      settings: [
        item('max.\\ attempts', count(r.maxAttempts)),
        word('backoff', b.kind),
        ...(b.kind === 'fixed' ? [item('delay', duration(b.delayMs))] : []),
        ...(b.kind === 'exponential'
          ? [item('base', duration(b.baseMs)), item('cap', duration(b.capMs)), word('jitter', b.jitter)]
          : []),
        word('on', r.retryOn.length === RETRY_ON.length ? 'any retryable failure' : r.retryOn.join(', ')),
        ...(r.otherReplica ? [item('to another replica', 'yes')] : []),
      ],
      measured: [
        measure('retries scheduled', (s) => p(s).retries),
        measure('not retried, attempts exhausted', (s) => p(s).retriesExhausted),
      ],
    });

  const bu = m.budget;
  if (bu)
    rows.push({
      policy: 'Retry budget',
      settings:
        bu.style === 'ratio'
          ? [word('style', 'ratio'), item('ratio', pct(bu.ratio)), item('burst (tokens)', count(bu.burst))]
          : [
              word('style', 'aws'),
              item('capacity (tokens)', count(bu.capacity)),
              item('retry cost', count(bu.retryCost)),
              item('timeout cost', count(bu.timeoutCost)),
              item('per success', count(bu.perSuccess)),
            ],
      measured: [measure('retries refused', (s) => p(s).retriesDeniedByBudget)],
    });

  const br = m.breaker;
  if (br)
    rows.push({
      policy: 'Circuit breaker',
      settings: [
        item('failure ratio', pct(br.failureRatio)),
        item('window', duration(br.windowMs)),
        item('min.\\ volume', count(br.minVolume)),
        item('open', duration(br.openMs)),
        item('probes', count(br.probes)),
      ],
      measured: [
        measure('opens', (s) => p(s).breakerOpens),
        measure('attempts refused', (s) => p(s).breakerRejected),
        // Measured (buckets × clients), so three figures like every measured value.
        item(
          'time open (client-seconds)',
          runs
            .map((x) => {
              const v = p(x.summary).breakerOpenS;
              return v === null || v === undefined ? '--' : si(v, '\\second');
            })
            .join(' / '),
        ),
      ],
    });

  const th = m.throttle;
  if (th)
    rows.push({
      policy: 'Adaptive throttling',
      settings: [item('K', count(th.k)), item('window', duration(th.windowMs))],
      measured: [measure('attempts refused', (s) => p(s).throttled)],
    });

  const h = m.hedge;
  if (h)
    rows.push({
      policy: 'Hedging',
      settings: [item('after', duration(h.delayMs)), item('max.\\ per try', count(h.maxHedges))],
      measured: [
        measure('hedges sent', (s) => p(s).hedgesSent),
        measure('won', (s) => p(s).hedgesWon),
        measure('refused by the budget', (s) => p(s).hedgesDenied),
      ],
    });

  if (m.replicas > 1)
    rows.push({
      policy: 'Load balancing',
      settings: [word('policy', m.balance ?? 'round-robin'), item('api replicas', count(m.replicas))],
      measured: [],
    });

  const a = m.abandon;
  if (a)
    rows.push({
      policy: 'Abandonment',
      settings: [
        item('fraction of users', pct(a.fraction)),
        word('patience', a.patience.dist),
        item('mean', duration(a.patience.meanMs)),
        ...(a.patience.dist === 'lognormal' ? [item('$\\sigma$', count(a.patience.sigma))] : []),
      ],
      measured: [measure('requests abandoned', (s) => p(s).abandoned)],
    });

  if (m.instances > 1)
    rows.push({
      policy: 'Clients',
      settings: [item('independent instances', count(m.instances))],
      measured: [],
    });
  return rows;
}

/** Items as one cell: "label: value; label: value" (both LaTeX already). */
function cell(items: readonly PolicyItem[]): string {
  return items.length === 0 ? '--' : items.map((i) => `${i.label}: ${i.value}`).join('; ');
}

export function policiesTable(name: string, e: Experiment, runs: readonly TableRun[]): TexTable {
  const many = runs.length > 1;
  return table(
    'policies',
    `${tex(name)}: the client's policies as the run built them, and what it measured of each over the whole run${
      many ? ` (runs ${runs.map((r) => r.index).join(', ')} in that order, separated by /)` : ''
    }. A policy the experiment does not declare has no row.`,
    ['Policy', 'Settings', 'Measured'],
    policyRows(e, runs).map((r) => [r.policy, cell(r.settings), cell(r.measured)]),
    {
      spec: 'l>{\\raggedright\\arraybackslash}p{0.44\\linewidth}>{\\raggedright\\arraybackslash}p{0.3\\linewidth}',
    },
  );
}
