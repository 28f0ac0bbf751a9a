import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isBenchError } from '../../../foundation/errors.js';
import { DEFAULT_SOCKET, dockerClient, engineAddress, engineEnv, pingEngine } from './engine.js';
import { sshDialArgs } from './sshDial.js';

// Finding the Docker engine as the docker CLI does: DOCKER_CONTEXT, DOCKER_HOST (unix, tcp with
// or without TLS, ssh), the current context of config.json, the default socket. Each HOME is a
// temporary folder; the pings go to real servers on a unix socket and on loopback.

function home(): string {
  return mkdtempSync(join(tmpdir(), 'metabench-dockerhome-'));
}

/** Writes ~/.docker/contexts/meta/<sha256(name)>/meta.json (and TLS files when given); returns the TLS folder. */
function addContext(
  h: string,
  name: string,
  host: string,
  opts: { skipVerify?: boolean; tls?: boolean } = {},
): string {
  const id = createHash('sha256').update(name).digest('hex');
  const meta = join(h, '.docker', 'contexts', 'meta', id);
  mkdirSync(meta, { recursive: true });
  writeFileSync(
    join(meta, 'meta.json'),
    JSON.stringify({
      Name: name,
      Metadata: {},
      Endpoints: { docker: { Host: host, SkipTLSVerify: opts.skipVerify ?? false } },
    }),
  );
  const tls = join(h, '.docker', 'contexts', 'tls', id, 'docker');
  if (opts.tls) {
    mkdirSync(tls, { recursive: true });
    for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(tls, f), 'pem');
  }
  return tls;
}

function useContext(h: string, name: string): void {
  mkdirSync(join(h, '.docker'), { recursive: true });
  writeFileSync(join(h, '.docker', 'config.json'), JSON.stringify({ auths: {}, currentContext: name }));
}

test('no setting at all: the default socket, saying so', () => {
  const a = engineAddress({}, home());
  assert.ok('socketPath' in a);
  assert.equal(a.socketPath, DEFAULT_SOCKET);
  assert.match(
    a.from!,
    /^the default socket \(DOCKER_HOST and DOCKER_CONTEXT unset, no currentContext in .*config\.json\)$/,
  );
});

test('DOCKER_HOST unix://: that socket', () => {
  const a = engineAddress({ DOCKER_HOST: 'unix:///run/user/1000/docker.sock' }, home());
  assert.deepEqual(a, {
    socketPath: '/run/user/1000/docker.sock',
    from: 'DOCKER_HOST=unix:///run/user/1000/docker.sock',
  });
});

test('DOCKER_HOST tcp://: plain HTTP, port 2375 by default', () => {
  assert.deepEqual(engineAddress({ DOCKER_HOST: 'tcp://127.0.0.1:2375' }, home()), {
    url: 'http://127.0.0.1:2375',
    from: 'DOCKER_HOST=tcp://127.0.0.1:2375',
  });
  assert.equal(
    (engineAddress({ DOCKER_HOST: 'tcp://10.0.0.5' }, home()) as { url: string }).url,
    'http://10.0.0.5:2375',
  );
});

test('DOCKER_HOST tcp:// with DOCKER_TLS_VERIFY: HTTPS on 2376, the PEM files of DOCKER_CERT_PATH', () => {
  const certs = home();
  for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(certs, f), 'pem');
  const a = engineAddress(
    { DOCKER_HOST: 'tcp://docker.example:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs },
    home(),
  );
  assert.deepEqual(a, {
    url: 'https://docker.example:2376',
    tls: {
      ca: join(certs, 'ca.pem'),
      cert: join(certs, 'cert.pem'),
      key: join(certs, 'key.pem'),
      verify: true,
    },
    from: 'DOCKER_HOST=tcp://docker.example:2376',
  });
  assert.deepEqual(engineEnv(a), {
    DOCKER_HOST: 'tcp://docker.example:2376',
    DOCKER_TLS_VERIFY: '1',
    DOCKER_CERT_PATH: certs,
  });
  // DOCKER_TLS alone: TLS without verifying the server; the certificates default to ~/.docker.
  const h = home();
  const b = engineAddress({ DOCKER_HOST: 'tcp://docker.example', DOCKER_TLS: '1' }, h);
  assert.deepEqual(b, {
    url: 'https://docker.example:2376',
    tls: { verify: false },
    from: 'DOCKER_HOST=tcp://docker.example',
  });
});

test('DOCKER_HOST ssh://: the user, host and port kept', () => {
  assert.deepEqual(engineAddress({ DOCKER_HOST: 'ssh://me@build.example:2222' }, home()), {
    ssh: 'ssh://me@build.example:2222',
    from: 'DOCKER_HOST=ssh://me@build.example:2222',
  });
  // The client's connections are the system ssh's (sshDial.ts), with that user, host and port.
  const client = dockerClient({ ssh: 'ssh://me@build.example:2222' });
  const modem = client.modem as unknown as { protocol: string; agent: unknown };
  assert.equal(modem.protocol, 'http');
  assert.ok(modem.agent instanceof Agent);
  assert.deepEqual(sshDialArgs('ssh://me@build.example:2222').slice(3, 9), [
    '-l',
    'me',
    '-p',
    '2222',
    '--',
    'build.example',
  ]);
});

test('DOCKER_HOST of another kind: a usage error naming it and the forms that work', () => {
  assert.throws(
    () => engineAddress({ DOCKER_HOST: 'npipe:////./pipe/docker_engine' }, home()),
    (e: unknown) =>
      isBenchError(e) &&
      e.code === 'E_USAGE' &&
      e.message.startsWith('DOCKER_HOST=npipe:////./pipe/docker_engine: not an engine address') &&
      /unix:\/\/\/path, tcp:\/\/host:port or ssh:\/\//.test(e.message),
  );
});

test('the current context of ~/.docker/config.json: its endpoint from meta/<sha256(name)>/meta.json', () => {
  const h = home();
  addContext(h, 'colima', `unix://${h}/.colima/default/docker.sock`);
  useContext(h, 'colima');
  const a = engineAddress({}, h);
  assert.deepEqual(a, {
    socketPath: `${h}/.colima/default/docker.sock`,
    from: `context "colima" (currentContext of ${h}/.docker/config.json), endpoint unix://${h}/.colima/default/docker.sock`,
  });
  // compose is pointed at the same engine (compose v1 reads no contexts).
  assert.deepEqual(engineEnv(a), { DOCKER_HOST: `unix://${h}/.colima/default/docker.sock` });
  // DOCKER_CONFIG moves the whole folder, as for the docker CLI.
  const other = home();
  addContext(other, 'remote', 'tcp://192.0.2.7:2375');
  useContext(other, 'remote');
  assert.equal(
    (engineAddress({ DOCKER_CONFIG: join(other, '.docker') }, h) as { url: string }).url,
    'http://192.0.2.7:2375',
  );
});

test('a context with TLS: the files of contexts/tls/<sha256(name)>/docker, SkipTLSVerify honoured', () => {
  const h = home();
  const tls = addContext(h, 'secure', 'tcp://docker.example:2376', { tls: true });
  addContext(h, 'lax', 'tcp://docker.example:2376', { tls: true, skipVerify: true });
  useContext(h, 'secure');
  assert.deepEqual((engineAddress({}, h) as { tls: object }).tls, {
    ca: join(tls, 'ca.pem'),
    cert: join(tls, 'cert.pem'),
    key: join(tls, 'key.pem'),
    verify: true,
  });
  useContext(h, 'lax');
  assert.equal((engineAddress({}, h) as { tls: { verify: boolean } }).tls.verify, false);
});

test('the order: DOCKER_CONTEXT, then DOCKER_HOST, then currentContext; "default" is the default socket', () => {
  const h = home();
  addContext(h, 'ctx-a', 'unix:///a.sock');
  addContext(h, 'ctx-b', 'unix:///b.sock');
  useContext(h, 'ctx-b');
  const at = (env: NodeJS.ProcessEnv): string => (engineAddress(env, h) as { socketPath: string }).socketPath;
  assert.equal(at({ DOCKER_CONTEXT: 'ctx-a', DOCKER_HOST: 'unix:///h.sock' }), '/a.sock');
  assert.equal(at({ DOCKER_HOST: 'unix:///h.sock' }), '/h.sock');
  assert.equal(at({}), '/b.sock');
  assert.equal(at({ DOCKER_CONTEXT: 'default' }), DEFAULT_SOCKET);
  useContext(h, 'default');
  assert.equal(at({}), DEFAULT_SOCKET);
});

test('a current context without its meta.json: a usage error naming the context and the file', () => {
  const h = home();
  useContext(h, 'gone');
  const id = createHash('sha256').update('gone').digest('hex');
  assert.throws(
    () => engineAddress({}, h),
    (e: unknown) =>
      isBenchError(e) &&
      e.code === 'E_USAGE' &&
      e.message ===
        `context "gone" (currentContext of ${h}/.docker/config.json): cannot read its endpoint from ${h}/.docker/contexts/meta/${id}/meta.json (ENOENT)`,
  );
});

test('the client goes where the context points (a real server on a unix socket), and a dead one is named', async () => {
  const h = home();
  const sock = join(h, 'engine.sock');
  const seen: string[] = [];
  const srv = createHttpServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
  });
  await new Promise<void>((r) => srv.listen(sock, () => r()));
  try {
    addContext(h, 'lab', `unix://${sock}`);
    useContext(h, 'lab');
    const a = engineAddress({}, h);
    await pingEngine(dockerClient(a), a);
    assert.ok(
      seen.some((u) => u.endsWith('/_ping')),
      `requests: ${seen.join(', ')}`,
    );
  } finally {
    await new Promise((r) => srv.close(r));
  }
  const dead = engineAddress({ DOCKER_HOST: `unix://${h}/none.sock` }, h);
  await assert.rejects(
    pingEngine(dockerClient(dead), dead),
    (e: unknown) =>
      isBenchError(e) &&
      e.code === 'E_LAB_PREFLIGHT' &&
      e.message.startsWith(
        `the Docker engine does not answer at unix://${h}/none.sock, from DOCKER_HOST=unix://${h}/none.sock (`,
      ),
  );
});

test('TLS from a context: a self-signed engine answers when SkipTLSVerify, and is refused when verified', async (t) => {
  const h = home();
  const pki = join(h, 'pki');
  mkdirSync(pki);
  const gen = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      join(pki, 'key.pem'),
      '-out',
      join(pki, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  if (gen.status !== 0) {
    t.skip('openssl is not installed');
    return;
  }
  const srv: Server = createHttpsServer(
    { key: readFileSync(join(pki, 'key.pem')), cert: readFileSync(join(pki, 'cert.pem')) },
    (_req, res) => res.writeHead(200).end('OK'),
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (srv.address() as AddressInfo).port;
    addContext(h, 'lax', `tcp://127.0.0.1:${port}`, { skipVerify: true, tls: true });
    addContext(h, 'strict', `tcp://127.0.0.1:${port}`, { tls: true });
    // The client's own certificate (the context's cert.pem/key.pem) and a CA that did not sign the server's.
    for (const name of ['lax', 'strict']) {
      const dir = join(
        h,
        '.docker',
        'contexts',
        'tls',
        createHash('sha256').update(name).digest('hex'),
        'docker',
      );
      writeFileSync(join(dir, 'key.pem'), readFileSync(join(pki, 'key.pem')));
      writeFileSync(join(dir, 'cert.pem'), readFileSync(join(pki, 'cert.pem')));
      spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=other-ca',
          '-keyout',
          join(dir, 'ca-key.pem'),
          '-out',
          join(dir, 'ca.pem'),
        ],
        { stdio: 'ignore' },
      );
    }
    useContext(h, 'lax');
    const lax = engineAddress({}, h);
    await pingEngine(dockerClient(lax), lax);
    useContext(h, 'strict');
    const strict = engineAddress({}, h);
    await assert.rejects(
      pingEngine(dockerClient(strict), strict),
      /does not answer at tcp:\/\/127\.0\.0\.1:\d+, from context "strict"/,
    );
  } finally {
    await new Promise((r) => srv.close(r));
  }
});
