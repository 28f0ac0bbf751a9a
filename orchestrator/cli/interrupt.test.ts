import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal, appliedNow } from '../trigger/journal.js';
import { interruptMessage, onInterrupt } from './interrupt.js';

test('the first SIGTERM aborts the command’s stop signal; dispose removes the handlers', async () => {
  const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
  const interrupt = onInterrupt({ left: () => [] });
  try {
    assert.equal(process.listenerCount('SIGTERM'), before.term + 1);
    assert.equal(process.listenerCount('SIGINT'), before.int + 1);
    assert.equal(interrupt.stop.aborted, false);
    // A signal arrives asynchronously: keep the event loop alive until it does.
    const alive = setTimeout(() => undefined, 10_000);
    process.kill(process.pid, 'SIGTERM');
    await once(interrupt.stop, 'abort');
    clearTimeout(alive);
    assert.equal(interrupt.stop.aborted, true);
  } finally {
    interrupt.dispose();
  }
  assert.equal(process.listenerCount('SIGTERM'), before.term);
  assert.equal(process.listenerCount('SIGINT'), before.int);
});

const OPTS = { stopping: 'stopping the run', forced: 'forced exit' };

test('Ctrl-C with a trigger or the lab still applied names `metabench lab reset`; with nothing applied it does not', () => {
  const left = ['resume api (pid 12)', 'stop the lab (api)'];
  const stopping = interruptMessage('SIGINT', 'stopping', left, OPTS)!;
  assert.match(stopping, /^\nSIGINT: stopping the run\n/);
  assert.match(stopping, /still applied: resume api \(pid 12\); stop the lab \(api\);/);
  assert.match(stopping, /`metabench lab reset` undoes them/);
  const forced = interruptMessage('SIGINT', 'forced', left, OPTS)!;
  assert.equal(
    forced,
    'SIGINT: forced exit; left applied: resume api (pid 12); stop the lab (api). Run `metabench lab reset` to undo them (the next metabench command does too)\n',
  );
  assert.match(interruptMessage('SIGTERM', 'forced', ['stop the lab (api)'], {})!, /undo it \(/);

  // Nothing applied (before the lab is up, or after it is down): no lab reset to run.
  assert.equal(interruptMessage('SIGINT', 'stopping', [], OPTS), '\nSIGINT: stopping the run\n');
  assert.equal(
    interruptMessage('SIGINT', 'forced', [], OPTS),
    'SIGINT: forced exit; nothing was left applied\n',
  );
  assert.equal(interruptMessage('SIGINT', 'stopping', [], {}), null);
  assert.equal(interruptMessage('SIGINT', 'forced', [], {}), null);
});

test("appliedNow names what this process's journals (its threads' too) hold, and no other process's", () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-journal-now-'));
  assert.deepEqual(appliedNow(dir), []);
  const j = new Journal(dir);
  j.record({
    id: 'lab',
    appliedAt: new Date().toISOString(),
    undo: { kind: 'none', what: 'stop the lab (api)' },
  });
  j.record({
    id: 't',
    appliedAt: new Date().toISOString(),
    undo: { kind: 'none', what: 'resume api (pid 12)' },
  });
  const entry = (what: string): string =>
    JSON.stringify({
      owner: { pid: 1, startTicks: null },
      entries: [{ id: 'x', appliedAt: '', undo: { kind: 'none', what } }],
    });
  writeFileSync(join(dir, `${process.pid}-thread3.json`), entry("a worker thread's fault"));
  writeFileSync(join(dir, `${process.pid + 1}.json`), entry("another process's fault"));
  assert.deepEqual(appliedNow(dir), ['stop the lab (api)', 'resume api (pid 12)', "a worker thread's fault"]);
  j.clear('t');
  j.clear('lab');
  assert.deepEqual(appliedNow(dir), ["a worker thread's fault"]);
});
