import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClassesSummary } from '../../orchestrator/analysis/classes.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import type { LabTopology } from '../../orchestrator/lab/Lab.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { assertClaimed, suiteScale } from '../helpers/catalogue.js';
import { readSeries, type Row } from '../helpers/experiment.js';

// Issue 11: the LLM-platform scenario on the local lab (stub provider behind its link,
// redis, postgres), at the suite's scale, with the provider failing 15%: the per-class results,
// the user-cancelled streams, and the api's retries in the upstream amplification series.
// No latency is asserted (this machine is shared): only what was counted.

function run(name: string) {
  const tmp = tempDir('llm-platform');
  const out = join(tmp, 'out');
  const done = runCli(
    ['run', `experiments/${name}.yaml`, '--scale', String(suiteScale(name)), '--out', out, '--quiet'],
    { METABENCH_STATE_DIR: join(tmp, 'state') },
  );
  return { out, done };
}

test('llm-platform-failing recovers after the burst: classes per phase, cancelled streams, the api retrying the provider', async () => {
  const { out, done } = run('llm-platform-failing');
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary & {
    classes: ClassesSummary;
  };
  assert.equal(s.usable, true);
  assert.equal(s.offered, s.recorded);
  assertClaimed('llm-platform-failing', s);

  const names = s.classes.classes.map((c) => c.name);
  assert.deepEqual(names, ['api_read', 'chat_stream', 'agent_run', 'rag_query', 'ingest']);
  for (const c of s.classes.classes) {
    assert.ok(c.windows.baseline.origins > 0, `${c.name} has baseline origins`);
    // Its thresholds (hypothesis.classes) are judged with the hypothesis, measured in the baseline.
    const judged = s.hypothesis.filter((h) => h.class === c.name && h.window === 'baseline');
    assert.ok(judged.length > 0, `${c.name} has thresholds`);
    for (const h of judged) assert.ok(['pass', 'fail'].includes(h.verdict), `${c.name} ${h.metric} measured`);
  }
  // One chat in five is cancelled by the user after 20 tokens: recorded apart from errors.
  const chat = s.classes.classes.find((c) => c.name === 'chat_stream')!;
  const windows = Object.values(chat.windows);
  const chats = windows.reduce((a, w) => a + w.origins, 0);
  const cancelled = windows.reduce((a, w) => a + w.cancelled, 0);
  // Every fifth chat is marked for cancelling; one whose stream fails before its 20th token
  // (a cut, a server error: this platform fails on purpose) ends as failed, not cancelled.
  const failed = windows.reduce((a, w) => a + w.failed, 0);
  assert.ok(
    cancelled <= Math.ceil(chats / 5) && cancelled >= Math.floor(chats / 5) - failed,
    `${cancelled} of ${chats} chats cancelled, ${failed} failed`,
  );
  assert.ok(cancelled > 0.15 * chats, `${cancelled} of ${chats} chats cancelled`);
  assert.ok(chat.windows.baseline.ttftMs.samples > 0 && chat.windows.baseline.itlMs.samples > 0);

  const [header, ...rows] = readFileSync(join(out, 'run-1/timeseries.csv'), 'utf8').trim().split('\n');
  const cols = header!.split(',');
  const column = (name: string): number[] => {
    const i = cols.indexOf(name);
    assert.ok(i >= 0, `timeseries.csv has ${name}`);
    return rows.map((row) => Number(row.split(',')[i] || 0));
  };
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  const calls = sum(column('llm_calls'));
  const attempts = sum(column('llm_attempts'));
  // 15% of the provider's answers fail and the api tries up to 3 times:
  // 1 + 0.15 + 0.15² ≈ 1.17 attempts a call.
  assert.ok(calls > 50, `${calls} provider calls`);
  assert.ok(attempts / calls > 1.1 && attempts / calls < 1.3, `upstream amplification ${attempts / calls}`);
  assert.ok(Math.max(...column('amplification_llm')) > 1);
  assert.ok(Math.max(...column('open_connections')) > 0);
  // The user's cancellations reached the api, which cancelled its upstream calls.
  assert.ok(sum(column('client_abandoned_chat')) > 0);
  assert.ok(sum(column('llm_aborted_chat')) > 0);

  const manifest = JSON.parse(readFileSync(join(out, 'run-1/manifest.json'), 'utf8')) as {
    topology: LabTopology;
  };
  const llm = manifest.topology.components.find((c) => c.name === 'llm');
  assert.equal(llm?.config['profile'], 'default');
  assert.deepEqual(
    manifest.topology.links?.map((l) => `${l.from}->${l.to}`),
    ['api->redis', 'api->postgres', 'api->llm'],
  );
  const report = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(report, /## Request classes/);
  assert.match(report, /ITL: \(last token − first token\) \/ \(tokens − 1\)/);
});

test('llm-platform passes every class threshold of its sustained phase and recovers after the burst', async () => {
  const { out, done } = run('llm-platform');
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary & {
    classes: ClassesSummary;
  };
  assert.equal(s.usable, true, s.warnings.join('; '));
  const verdicts = s.hypothesis
    .filter((h) => h.class !== undefined && h.window === 'baseline')
    .map((h) => `${h.class} ${h.metric}: ${h.verdict}`);
  assert.ok(verdicts.length >= 5, verdicts.join('; '));
  assert.deepEqual(
    verdicts.filter((v) => !v.endsWith(': pass')),
    [],
  );
  assertClaimed('llm-platform', s);

  // The provider's own series (its /metrics scraped into timeseries.csv) in the sustained
  // phase: it ends about as many requests as the api sends it attempts, refuses none
  // (the default profile fails nothing), and streams tokens.
  const rows = readSeries(out);
  for (const col of ['llm_provider_requests', 'llm_provider_errors_down', 'llm_provider_tokens'])
    assert.ok(col in rows[0]!, `timeseries.csv has ${col}`);
  const sustain = rows.filter((row) => row['phase'] === 'baseline');
  const total = (col: string, rs: Row[]): number => rs.reduce((a, row) => a + Number(row[col] ?? 0), 0);
  const requests = total('llm_provider_requests', sustain);
  const attempts = total('llm_attempts', sustain);
  assert.ok(requests > 0 && total('llm_provider_tokens', sustain) > 0, `${requests} provider requests`);
  assert.ok(
    requests > 0.8 * attempts && requests < 1.25 * attempts,
    `${requests} provider requests for ${attempts} api attempts`,
  );
  assert.equal(total('llm_provider_errors_down', sustain), 0);
});
