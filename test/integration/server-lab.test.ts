import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { processTree } from '../../orchestrator/lab/proc/procUsage.js';
import { startCli, tempDir } from '../helpers/cli.js';
import { processState } from '../helpers/procState.js';
import { readEvents } from '../../bench/record/eventLog.js';

// Issue 34, point 4: each reference server (lab.api.server) started by `metabench run` from
// an experiment file on the local runtime, in the api's place: the load reaches it, its
// series are scraped into timeseries.csv, a pause of `api` freezes every process of it
// (guards, master, workers; nginx with php-fpm and gunicorn) and is undone, the run gets its verdict, and
// nothing of the server is left once the command has ended.

const SERVERS = {
  'php-fpm': '',
  gunicorn: '',
  jvm: ', jvm: { heapMiB: 64, holdKiB: 64 }',
} as const;

/** Each server's processes with 4 workers: its guards, its master and 4 workers (php-fpm's children, gunicorn's sync workers) with nginx's master and worker in front; one JVM (its pool is threads). */
const PROCESSES = { 'php-fpm': 2 + 5 + 2, gunicorn: 2 + 5 + 2, jvm: 1 + 1 } as const;

function experiment(server: keyof typeof SERVERS): string {
  return `name: server-lab-${server}
lab:
  api: { server: ${server}, workers: 4, work: { dist: constant, mean: 50ms }${SERVERS[server]} }
load: { arrival: constant, rate: 40/s }
client: { timeout: 1s, retry: { policy: none } }
schedule:
  warmup: 2s
  baseline: 4s
  trigger: { kind: pause, target: api, duration: 2s }
  observe: 6s
recovery: { within: 5x, tolerance: 50%, window: 2s, hold: 2s }
seed: 5
`;
}

/** The processes other than the CLI's own node process and its children that run node (the fault proxy has none here). */
function serverPids(cli: number): number[] {
  return processTree(cli).filter((pid) => {
    if (pid === cli) return false;
    try {
      return !readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(process.execPath);
    } catch {
      return false;
    }
  });
}

for (const server of Object.keys(SERVERS) as (keyof typeof SERVERS)[])
  test(`lab.api.server: ${server} runs from an experiment file: scraped, paused as a whole and resumed, a verdict, nothing left`, async () => {
    const dir = tempDir(`server-lab-${server}`);
    const file = join(dir, `server-lab-${server}.yaml`);
    writeFileSync(file, experiment(server));
    const out = join(dir, 'out');
    const cli = startCli(['run', file, '--out', out, '--quiet', '--runtime', 'local']);
    const pid = cli.child.pid!;
    const seen = new Set<number>();
    // Samples of the server's processes: were they ever all stopped (SIGSTOP) at once?
    let allStopped = false;
    let mostSeen = 0;
    const timer = setInterval(() => {
      const pids = serverPids(pid);
      for (const p of pids) seen.add(p);
      mostSeen = Math.max(mostSeen, pids.length);
      const states = pids.map(processState).filter((s) => s !== null);
      if (states.length > 1 && states.every((s) => s === 'T')) allStopped = true;
    }, 100);
    const r = await cli.done.finally(() => clearInterval(timer));
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
    // A verdict; on a loaded machine the verdict may be "invalid" (the generator's lag), exit 11.
    assert.equal(r.code, s.outcome === 'invalid' ? 11 : 0, r.stderr);

    // Its process group: the guards, the master and its workers (plus nginx's for php-fpm and gunicorn).
    assert.ok(
      mostSeen >= PROCESSES[server],
      `${server}: at most ${mostSeen} processes of the server seen (${PROCESSES[server]} expected)`,
    );
    assert.ok(allStopped, `${server}: its processes were never all stopped at once by the pause`);
    const left = [...seen].filter((p) => processState(p) !== null && processState(p) !== 'Z');
    assert.deepEqual(left, [], `${server}: processes left after the run`);

    assert.equal(s.offered, s.recorded);
    assert.ok(
      ['recovered', 'recovered-late', 'metastable', 'not-recovered', 'unmeasured', 'invalid'].includes(
        s.outcome,
      ),
    );
    const triggerCheck = s.validity.checks.find((c) => c.check === 'trigger');
    assert.ok(
      triggerCheck?.ok,
      `${server}: the pause took effect on time and was undone: ${JSON.stringify(triggerCheck)}`,
    );
    const events = readEvents(join(out, 'run-1')) as unknown as { e: string; action?: string }[];
    assert.deepEqual(
      events.filter((e) => e.e === 'trigger').map((e) => e.action),
      ['apply', 'undo'],
    );
    // The baseline was served by the server (its success count) and scraped in the bench's names.
    assert.ok(s.baseline.goodputPerS! > 30, `${server}: baseline goodput ${s.baseline.goodputPerS}`);
    const rows = parse(readFileSync(join(out, 'run-1', 'timeseries.csv')), { columns: true }) as Record<
      string,
      string
    >[];
    const baseline = rows.filter((row) => row['phase'] === 'baseline');
    assert.ok(
      baseline.some((row) => Number(row['server_received']) > 0),
      `${server}: server_received in the baseline`,
    );
    const amp = s.baseline.amplificationServer!;
    assert.ok(amp > 0.8 && amp < 1.25, `${server}: server-side amplification in the baseline ${amp}`);
    const manifest = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
      topology: { components: { name: string; config?: { server?: { kind: string } } }[] };
    };
    assert.equal(manifest.topology.components.find((c) => c.name === 'api')?.config?.server?.kind, server);
    if (server === 'jvm') {
      for (const col of ['gc_seconds', 'gc_collections', 'heap_used_bytes'])
        assert.ok(col in rows[0]!, `the JVM's ${col} column`);
      assert.ok(baseline.some((row) => Number(row['heap_used_bytes']) > 0));
    }
  });

for (const server of ['php-fpm', 'gunicorn'] as const)
  test(`a kill of the ${server} server kills its whole group, nginx included; it starts again on the same port and serves`, async () => {
    const dir = tempDir(`server-lab-kill-${server}`);
    const file = join(dir, `server-lab-kill-${server}.yaml`);
    writeFileSync(
      file,
      experiment(server).replace(
        '{ kind: pause, target: api, duration: 2s }',
        '{ kind: kill, target: api, duration: 2s }',
      ),
    );
    const out = join(dir, 'out');
    const cli = startCli(['run', file, '--out', out, '--quiet', '--runtime', 'local']);
    const seen = new Set<number>();
    const timer = setInterval(() => {
      for (const p of serverPids(cli.child.pid!)) seen.add(p);
    }, 100);
    const r = await cli.done.finally(() => clearInterval(timer));
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
    // A verdict; on a loaded machine the verdict may be "invalid" (the generator's lag), exit 11.
    assert.equal(r.code, s.outcome === 'invalid' ? 11 : 0, r.stderr);
    // Served again after the restart, where the load goes (the same port).
    assert.ok(s.afterTrigger.goodputPerS! > 30, `goodput after the restart: ${s.afterTrigger.goodputPerS}`);
    assert.equal(s.validity.checks.find((c) => c.check === 'trigger')?.ok, true);
    // Two generations of processes (killed, then started again), none left.
    assert.ok(seen.size >= 2 * PROCESSES[server], `${seen.size} processes seen`);
    const left = [...seen].filter((p) => processState(p) !== null && processState(p) !== 'Z');
    assert.deepEqual(left, []);
  });
