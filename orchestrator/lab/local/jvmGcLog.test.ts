import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GcLog, withoutGcCounters } from './jvmGcLog.js';

// Lines as JDK 17's -Xlog:gc writes them (serial collector, from a run of RefServer).
const LINES = [
  '[0.004s][info][gc] Using Serial',
  '[8.121s][info][gc] GC(39) Pause Young (Allocation Failure) 16M->3M(46M) 0.625ms',
  '[78.776s][info][gc] GC(2999) Pause Full (Allocation Failure) 46M->46M(46M) 29.495ms',
];

test('the GC log: pause times summed into GC seconds, one collection a pause, other lines ignored', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gclog-test-'));
  try {
    const log = new GcLog(join(dir, 'gc.log'));
    log.poll(); // not written yet: nothing
    assert.match(log.text(), /^jvm_gc_time_seconds_total 0$/m);
    appendFileSync(join(dir, 'gc.log'), `${LINES.join('\n')}\n[79.1s][info][gc] GC(3000) Pause Full (Alloc`);
    log.poll();
    assert.match(log.text(), /^jvm_gc_time_seconds_total 0\.03012$/m);
    assert.match(log.text(), /^jvm_gc_collections_total 2$/m);
    // The half-written line is counted once it is whole, and only then.
    appendFileSync(join(dir, 'gc.log'), 'ation Failure) 46M->45M(46M) 10.005ms\n');
    log.poll();
    assert.match(log.text(), /^jvm_gc_time_seconds_total 0\.040125$/m);
    assert.match(log.text(), /^jvm_gc_collections_total 3$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the server's own GC counters are dropped from its text, the rest kept", () => {
  const text = [
    '# HELP jvm_gc_time_seconds_total Time the collectors took',
    '# TYPE jvm_gc_time_seconds_total counter',
    'jvm_gc_time_seconds_total 1.5',
    '# TYPE jvm_gc_collections_total counter',
    'jvm_gc_collections_total 7',
    'jvm_memory_heap_used_bytes 100',
    'api_requests_received_total 3',
  ].join('\n');
  assert.equal(withoutGcCounters(text), 'jvm_memory_heap_used_bytes 100\napi_requests_received_total 3');
});
