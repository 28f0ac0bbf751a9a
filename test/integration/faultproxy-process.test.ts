import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LinkClient } from '../../orchestrator/lab/links.js';
import { recoverOrphanedFaults } from '../../orchestrator/trigger/journal.js';
import type { UndoRecipe } from '../../orchestrator/lab/Lab.js';
import { runCli, startCli, tempDir } from '../helpers/cli.js';
import { connectTo, echoRoundTrip, echoServer, http } from '../helpers/sockets.js';

const MAIN = fileURLToPath(new URL('../../services/faultproxy/main.js', import.meta.url));

/** Resolves with the {"event":"listening"} line a fault proxy process prints. */
function listening(child: ChildProcess): Promise<{ port: number; proxies: number }> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d));
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line) as { port: number; proxies: number });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${err}`)));
  });
}

/** Writes a journal file as a crashed orchestrator (a pid that no longer runs) would have left it. */
function leaveJournal(dir: string, undo: UndoRecipe[]): void {
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${dead}.json`),
    JSON.stringify({
      owner: { pid: dead, startTicks: null },
      entries: undo.map((u, i) => ({ id: `f${i}`, appliedAt: new Date().toISOString(), undo: u })),
    }),
  );
}

test('metabench faultproxy takes Toxiproxy flags with one or two dashes and loads -config', async () => {
  const dir = tempDir('faultproxy');
  const config = join(dir, 'proxies.json');
  writeFileSync(
    config,
    JSON.stringify([{ name: 'redis', listen: '127.0.0.1:0', upstream: '127.0.0.1:6379' }]),
  );
  for (const args of [
    ['-host', '127.0.0.1', '-port', '0', '-config', config, '-seed', '3'],
    ['--host=127.0.0.1', '--port=0', `--config=${config}`],
  ]) {
    const run = startCli(['faultproxy', ...args]);
    try {
      const ready = await listening(run.child);
      assert.equal(ready.proxies, 1);
      const r = await http(`http://127.0.0.1:${ready.port}`, 'GET', '/proxies/redis');
      assert.equal(r.status, 200);
      assert.match(r.text, /"upstream":"127\.0\.0\.1:6379","enabled":true/);
    } finally {
      run.child.kill('SIGTERM');
      assert.equal((await run.done).code, 0);
    }
  }
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '[{"name":"x"}]');
  const r = await runCli(['faultproxy', '-port', '0', '-config', bad]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /missing required field: upstream at proxy 1/);
});

test('the link client drives a fault proxy process, and the journal replays its HTTP undo recipes', async () => {
  const child = spawn(process.execPath, [MAIN, '-port', '0', '-seed', '1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const echo = await echoServer();
  const journal = join(tempDir('journal'), 'journal');
  try {
    const { port } = await listening(child);
    const links = new LinkClient(`http://127.0.0.1:${port}`);
    assert.equal(await links.version(), '2.12.0');

    const spec = { name: 'api-redis', listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}` };
    const link = await links.ensureLink(spec);
    assert.equal(link.enabled, true);
    assert.deepEqual(await links.ensureLink({ ...spec, listen: link.listen }), link, 'idempotent');
    const linkPort = Number(link.listen.split(':')[1]);

    const { toxic, undo } = await links.addToxic('api-redis', {
      type: 'latency',
      attributes: { latency: 300 },
    });
    assert.equal(toxic.name, 'latency_downstream');
    assert.deepEqual(undo, {
      kind: 'http',
      method: 'DELETE',
      url: `http://127.0.0.1:${port}/proxies/api-redis/toxics/latency_downstream`,
      what: 'remove toxic latency_downstream from link api-redis',
    });
    const updated = await links.updateToxic('api-redis', 'latency_downstream', { attributes: { jitter: 5 } });
    assert.deepEqual(updated.attributes, { latency: 300, jitter: 5 });
    const s = await connectTo(linkPort);
    assert.ok((await echoRoundTrip(s, 'slow')) >= 295);

    // The orchestrator "crashed" with the toxic applied: the next command undoes it.
    leaveJournal(journal, [undo]);
    const said = recoverOrphanedFaults(journal);
    assert.deepEqual(said, [
      `remove toxic latency_downstream from link api-redis: DELETE ${undo.kind === 'http' ? undo.url : ''} (HTTP 204)`,
    ]);
    assert.deepEqual(await links.listToxics('api-redis'), []);
    assert.ok((await echoRoundTrip(s, 'fast')) < 200, 'the live connection is fast again');

    // Undoing twice is harmless.
    leaveJournal(journal, [undo]);
    assert.match(
      recoverOrphanedFaults(journal)[0]!,
      /already undone \(HTTP 404 \{"error":"toxic not found","status":404\}\)/,
    );

    // A disabled link comes back.
    const enable = await links.disable('api-redis');
    assert.equal((await links.get('api-redis')).enabled, false);
    await assert.rejects(connectTo(linkPort), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
    leaveJournal(journal, [enable]);
    assert.deepEqual(recoverOrphanedFaults(journal), [
      `re-enable link api-redis: POST http://127.0.0.1:${port}/proxies/api-redis (HTTP 200)`,
    ]);
    assert.equal((await links.get('api-redis')).enabled, true);
    const again = await connectTo(linkPort);
    again.destroy();
    s.destroy();

    // Re-pointed (the swarm lab's api link after a start): listen, toxics and a disabled state kept.
    const other = await echoServer();
    try {
      await links.addToxic('api-redis', { type: 'latency', attributes: { latency: 300 } });
      await links.disable('api-redis');
      await links.repoint('api-redis', `127.0.0.1:${other.port}`);
      const moved = await links.get('api-redis');
      assert.deepEqual(
        [moved.listen, moved.upstream, moved.enabled],
        [link.listen, `127.0.0.1:${other.port}`, false],
      );
      assert.deepEqual(
        (await links.listToxics('api-redis')).map((t) => t.name),
        ['latency_downstream'],
      );
      await links.enable('api-redis');
      const via = await connectTo(linkPort);
      assert.ok((await echoRoundTrip(via, 'moved')) >= 295, 'through the toxic, to the new upstream');
      via.destroy();
      await links.removeToxic('api-redis', 'latency_downstream');
      await links.repoint('api-redis', `127.0.0.1:${echo.port}`);
    } finally {
      await other.close();
    }

    // Errors from the client say what was being done.
    await assert.rejects(
      links.removeToxic('api-redis', 'nope'),
      /could not find toxic nope of link api-redis/,
    );

    // A fault proxy that is gone took its faults with it.
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    leaveJournal(journal, [undo]);
    assert.match(
      recoverOrphanedFaults(journal)[0]!,
      /nothing answers at 127\.0\.0\.1:\d+ any more \(gone, its faults with it\), nothing to undo/,
    );
  } finally {
    child.kill('SIGKILL');
    await echo.close();
  }
});
