import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dockerClient } from './engine.js';
import { freePort } from '../local/dataServices.js';
import { sshDialArgs } from './sshDial.js';

test('ssh engine: the docker CLI’s ssh arguments, user and port from the URL, the host after --', () => {
  assert.deepEqual(sshDialArgs('ssh://ops%40x@node-1.lan:2222'), [
    '-o',
    'ConnectTimeout=30',
    '-T',
    '-l',
    'ops@x',
    '-p',
    '2222',
    '--',
    'node-1.lan',
    'docker',
    'system',
    'dial-stdio',
  ]);
  assert.deepEqual(sshDialArgs('ssh://alias'), [
    '-o',
    'ConnectTimeout=30',
    '-T',
    '--',
    'alias',
    'docker',
    'system',
    'dial-stdio',
  ]);
});

test('ssh engine: a call to a host where nothing listens fails with ssh’s exit and its own words', async () => {
  const port = await freePort('127.0.0.1');
  await assert.rejects(
    dockerClient({ ssh: `ssh://127.0.0.1:${port}` }).ping(),
    /ssh .*-p \d+ -- 127\.0\.0\.1 docker system dial-stdio exited with 255: .*Connection refused/,
  );
});
