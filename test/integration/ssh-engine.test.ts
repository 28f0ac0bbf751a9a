import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type Docker from 'dockerode';
import { DEFAULT_SOCKET, dockerClient, engineAddress } from '../../orchestrator/lab/engine/engine.js';
import { seenFrom } from '../../orchestrator/lab/engine/seenFrom.js';
import { sshHostName } from '../../orchestrator/lab/engine/sshDial.js';
import { parseEnvFile } from '../../orchestrator/lab/engine/images.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { OFFLINE_ENV_FILE, offlineImagesMissing } from '../helpers/offlineImages.js';
import { tempDir } from '../helpers/cli.js';

// An ssh:// engine reached as the docker CLI reaches it (issue 36): the system ssh, reading a
// Host alias, its Port, an IdentityFile and a known_hosts from an ssh config, with no agent, runs
// `docker system dial-stdio` on the far side, and the triggers' calls (create, inspect, pause,
// unpause, remove of a small container) go over it. The sshd is Debian's openssh-server, started
// here on a free loopback port: a network namespace would add nothing, since what is tested is
// the ssh leg (config, key file, host key) and the far side's dial-stdio reaches the engine by
// its socket either way. OpenSSH reads ~/.ssh/config from the passwd entry, not $HOME, so the
// test puts an `ssh` first on PATH that adds `-F <the test's config>`: the orchestrator still
// runs `ssh` from PATH, as the docker CLI does. Run it under the Docker lock.

const SSHD = '/usr/sbin/sshd';
const ALIAS = 'metabench-test-engine';
const LABEL = 'metabench.test=ssh-engine';
const dir = tempDir('ssh-engine');
let sshd: ChildProcess | undefined;
let sshdLog = '';
let port = 0;
const local = dockerClient({ socketPath: DEFAULT_SOCKET });

async function whyNot(): Promise<string | undefined> {
  if (!existsSync(SSHD)) return `${SSHD} is absent: apt-get install openssh-server (.ci/run installs it)`;
  try {
    await local.ping();
  } catch (err) {
    return `no Docker engine answers on the default socket (${(err as Error).message})`;
  }
  return offlineImagesMissing(local, OFFLINE_ENV_FILE);
}
const skip = await whyNot();

const keygen = (file: string): void => {
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
};

const listening = async (p: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port: p }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

before(async () => {
  if (skip) return;
  port = await freePort('127.0.0.1');
  keygen(join(dir, 'host_key'));
  keygen(join(dir, 'id_test'));
  keygen(join(dir, 'id_other'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'id_test.pub')));
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PidFile none',
      'UsePAM no',
      // The files are in a temporary folder whose modes sshd's checks would refuse.
      'StrictModes no',
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'AllowAgentForwarding no',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  // The client's config: only an alias names the sshd; the key is a file, the host key new.
  const host = (alias: string, key: string): string[] => [
    `Host ${alias}`,
    '  HostName 127.0.0.1',
    `  Port ${port}`,
    '  User root',
    `  IdentityFile ${join(dir, key)}`,
    '  IdentitiesOnly yes',
    '  IdentityAgent none',
    '  StrictHostKeyChecking accept-new',
    `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
    '  BatchMode yes',
  ];
  writeFileSync(
    join(dir, 'ssh_config'),
    [...host(ALIAS, 'id_test'), ...host(`${ALIAS}-other`, 'id_other'), ''].join('\n'),
  );
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin', 'ssh'), `#!/bin/sh\nexec /usr/bin/ssh -F ${join(dir, 'ssh_config')} "$@"\n`);
  chmodSync(join(dir, 'bin', 'ssh'), 0o755);
  process.env.PATH = `${join(dir, 'bin')}:${process.env.PATH ?? ''}`;
  delete process.env.SSH_AUTH_SOCK;
  // sshd's privilege separation folder, which the service's unit would make.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  sshd.stderr!.on('data', (d: Buffer) => (sshdLog += d.toString()));
  for (let i = 0; i < 100 && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(await listening(port), `sshd did not listen on 127.0.0.1:${port}: ${sshdLog}`);
});

after(async () => {
  const left = await local.listContainers({ all: true, filters: { label: [LABEL] } }).catch(() => []);
  for (const c of left) await local.getContainer(c.Id).remove({ force: true });
  // Idle connections end with their ssh (a session's sshd holds the log pipe open until then).
  for (const d of clients) (d.modem as unknown as { agent: Agent }).agent.destroy();
  sshd?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const clients: Docker[] = [];
const viaAlias = (alias = ALIAS): Docker => {
  const d = dockerClient(engineAddress({ DOCKER_HOST: `ssh://${alias}` }, dir));
  clients.push(d);
  return d;
};

test(
  'the triggers’ calls reach the engine through an ssh config’s alias, key file and known_hosts, with no agent',
  { skip },
  async () => {
    const docker = viaAlias();
    await docker.ping();
    const image = parseEnvFile(readFileSync(OFFLINE_ENV_FILE, 'utf8')).METABENCH_REDIS_IMAGE!;
    const c = await docker.createContainer({
      Image: image,
      Entrypoint: ['sleep', 'infinity'],
      Labels: { 'metabench.test': 'ssh-engine' },
      HostConfig: { NetworkMode: 'none' },
    });
    await c.start();
    assert.equal((await c.inspect()).State.Status, 'running');
    await c.pause();
    assert.equal((await c.inspect()).State.Status, 'paused');
    // The local engine sees the same container paused: the calls went to this engine.
    assert.equal((await local.getContainer(c.id).inspect()).State.Status, 'paused');
    await c.unpause();
    assert.equal((await c.inspect()).State.Status, 'running');
    await c.remove({ force: true });
    // One ssh session carried every call: idle connections are kept, not a handshake per call.
    assert.equal(sshdLog.match(/Accepted publickey for root/g)?.length, 1, sshdLog);
    // accept-new wrote the sshd's host key on the first connection.
    assert.match(readFileSync(join(dir, 'known_hosts'), 'utf8'), /ssh-ed25519/);
  },
);

test(
  'the address the ssh engine sees this machine from follows the config’s HostName (ssh -G)',
  { skip },
  async () => {
    assert.equal(await seenFrom(engineAddress({ DOCKER_HOST: `ssh://${ALIAS}` }, dir)), '127.0.0.1');
    assert.equal(sshHostName(`ssh://${ALIAS}`), '127.0.0.1');
  },
);

test('a key the sshd does not accept fails the call with ssh’s own words', { skip }, async () => {
  await assert.rejects(viaAlias(`${ALIAS}-other`).ping(), /exited with 255: .*Permission denied/);
});
