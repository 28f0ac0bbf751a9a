import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { within } from './within.js';

// A stalled request holds nothing on the event loop (the promise below stands for it): with
// AbortSignal.timeout the process would end in silence, the promise pending; `within` keeps
// it alive until its time limit and rejects with a TimeoutError.
const stalled = (how: 'within' | 'AbortSignal.timeout'): string => `
  import { within } from ${JSON.stringify(new URL('./within.js', import.meta.url).href)};
  const stall = (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  const p = ${how === 'within' ? 'within(200, stall)' : 'stall(AbortSignal.timeout(200))'};
  p.then(() => console.log('answered'), (e) => console.log('rejected', e.name));`;

test('within: a stalled call with nothing on the event loop is aborted at its limit, not left pending at exit', () => {
  const run = (how: 'within' | 'AbortSignal.timeout'): string =>
    spawnSync(process.execPath, ['--input-type=module', '-e', stalled(how)], {
      encoding: 'utf8',
    }).stdout.trim();
  assert.equal(run('within'), 'rejected TimeoutError');
  assert.equal(
    run('AbortSignal.timeout'),
    '',
    'the unref’d timer lets the process end first (why within exists)',
  );
});

test('within: an answer before the limit is returned and the timer cleared (the process ends at once)', async () => {
  assert.equal(await within(60_000, async () => 'ok'), 'ok');
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { within } from ${JSON.stringify(new URL('./within.js', import.meta.url).href)};
       console.log(await within(60_000, async () => 'ok'));`,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
  assert.equal(r.stdout.trim(), 'ok');
  assert.equal(r.signal, null, 'ended by itself, not by the 30 s kill: the 60 s timer was cleared');
});
