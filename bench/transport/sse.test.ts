import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { SseMeter } from './sse.js';

const head = 'data: {"id":"c","object":"chat.completion.chunk","choices":[';
const role = `${head}{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}]}\n\n`;
const token = (t: string): string => `${head}{"index":0,"delta":{"content":${JSON.stringify(t)}}}]}\n\n`;
const finish = `${head}{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`;

test('TTFT is taken at the first non-empty content chunk (not the role chunk); ITL excludes the first token', () => {
  const clock = new VirtualClock();
  const m = new SseMeter(clock, 0);
  clock.jumpTo(300);
  m.push(role);
  clock.jumpTo(400);
  m.push(token('Hello'));
  clock.jumpTo(430);
  m.push(token(' world'));
  clock.jumpTo(500);
  m.push(token('!') + finish + 'data: [DONE]\n\n');
  assert.deepEqual(m.result(), { tokens: 3, done: true, ttftMs: 400, itlMs: 50 });
});

test('frames split across reads are counted once, at the read that completes them', () => {
  const clock = new VirtualClock();
  const m = new SseMeter(clock, 10);
  const all = role + token('a') + token('b');
  const cut = role.length + 15;
  clock.jumpTo(100);
  assert.equal(m.push(Buffer.from(all.slice(0, cut))), 0);
  clock.jumpTo(120);
  assert.equal(m.push(Buffer.from(all.slice(cut))), 2);
  const r = m.result();
  assert.equal(r.ttftMs, 110);
  assert.equal(r.itlMs, 0);
  assert.equal(r.done, false);
});

test('no content: no TTFT; one token: no ITL', () => {
  const clock = new VirtualClock();
  const m = new SseMeter(clock, 0);
  m.push(role);
  assert.deepEqual(m.result(), { tokens: 0, done: false });
  clock.jumpTo(5);
  m.push(token('x'));
  assert.deepEqual(m.result(), { tokens: 1, done: false, ttftMs: 5 });
});
