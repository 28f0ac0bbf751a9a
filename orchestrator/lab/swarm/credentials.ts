import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { BenchError } from '../../../foundation/errors.js';

/**
 * The stack's data services take a password (defence in depth: the stack's network is
 * attachable, so any container on a node can join it). Each password is a swarm secret the
 * orchestrator creates once per stack (ensureSecrets: random, never written anywhere else;
 * `docker stack rm` removes it with the stack's label), mounted at /run/secrets/<name> in the
 * services that need it. Redis reads `requirepass` from stdin (not its command line, which
 * `docker inspect` shows); Postgres takes its authentication from a pg_hba.conf of the stack
 * (`-c hba_file`: any image, the official's or the offline stand-in, honours it), with the
 * password set from the secret at every `up` (setPostgresPassword), so a data volume initialised
 * before the secret existed is covered too. The orchestrator reads a password through the engine
 * (readSecret), in memory only.
 */

type Service = Record<string, unknown>;

export const SECRETS = { redis: 'redis-password', postgres: 'postgres-password' } as const;
export type SecretName = (typeof SECRETS)[keyof typeof SECRETS];

export const secretPath = (s: SecretName): string => `/run/secrets/${s}`;

/** The engine's name of a stack's secret (what `docker stack deploy` would name it). */
export const secretName = (stack: string, s: SecretName): string => `${stack}_${s}`;

/** Where the stack's postgres reads its pg_hba.conf. */
export const PG_HBA_TARGET = '/etc/metabench/pg_hba.conf';

/** The container's own socket trusted (healthcheck, setPostgresPassword); over the network, a password. */
export const PG_HBA = [
  '# metabench swarm stack: trust on the local socket only; every TCP connection gives the password',
  'local all all trust',
  'host all all all scram-sha-256',
  '',
].join('\n');

/** The stack file's top-level `secrets:` (created by ensureSecrets before the deploy). */
export function stackSecrets(stack: string): Record<string, { external: true; name: string }> {
  return Object.fromEntries(
    Object.values(SECRETS).map((s) => [s, { external: true as const, name: secretName(stack, s) }]),
  );
}

/**
 * A service of the stack with its credentials: Redis with requirepass (and a healthcheck that
 * authenticates), Postgres with the stack's pg_hba.conf (`hbaConfig`: the config's key), the api
 * with the flags that name its password files; the control service reads both.
 */
export function withCredentials(name: string, svc: Service, hbaConfig?: string): Service {
  const out: Service = { ...svc };
  if (name === 'redis') {
    const command = Array.isArray(svc.command) ? (svc.command as string[]) : ['redis-server'];
    // `redis-server ARGS -` reads more configuration from stdin: the password never is an argument.
    // ($$: `docker stack deploy` interpolates the file; $$ is a literal $.)
    out.command = [
      'sh',
      '-c',
      `exec "$$@" - <<EOF\nrequirepass $$(cat ${secretPath(SECRETS.redis)})\nEOF`,
      'redis',
      ...command,
    ];
    out.healthcheck = {
      ...(svc.healthcheck as object | undefined),
      test: [
        'CMD-SHELL',
        `REDISCLI_AUTH="$$(cat ${secretPath(SECRETS.redis)})" redis-cli ping | grep -q PONG`,
      ],
    };
    out.secrets = [SECRETS.redis];
  } else if (name === 'postgres') {
    const command = Array.isArray(svc.command) ? (svc.command as string[]) : ['postgres'];
    out.command = [...command, '-c', `hba_file=${PG_HBA_TARGET}`];
    const env = (svc.environment ?? {}) as Record<string, string>;
    // The official image sets it at its first start; the offline one ignores it (setPostgresPassword does it).
    out.environment = { ...env, POSTGRES_PASSWORD_FILE: secretPath(SECRETS.postgres) };
    out.secrets = [SECRETS.postgres];
    if (hbaConfig)
      out.configs = [...((svc.configs ?? []) as object[]), { source: hbaConfig, target: PG_HBA_TARGET }];
  } else if (name === 'control') out.secrets = Object.values(SECRETS);
  else if (name === 'api') {
    if (typeof svc.command === 'string')
      out.command = `${svc.command} --redis-password-file ${secretPath(SECRETS.redis)} --postgres-password-file ${secretPath(SECRETS.postgres)}`;
    out.secrets = Object.values(SECRETS);
  }
  return out;
}

/** Creates each of the stack's secrets the engine does not have yet (a random password); returns the names created. */
export async function ensureSecrets(docker: Docker, stack: string): Promise<string[]> {
  const have = new Set(
    ((await docker.listSecrets()) as { Spec?: { Name?: string } }[]).map((s) => s.Spec?.Name),
  );
  const created: string[] = [];
  for (const s of Object.values(SECRETS)) {
    const name = secretName(stack, s);
    if (have.has(name)) continue;
    await docker.createSecret({
      Name: name,
      // Letters and digits: no quoting anywhere it is read (a shell, a config line, a URL).
      Data: Buffer.from(randomBytes(24).toString('hex')).toString('base64'),
      // The stack's label: `docker stack rm` removes it with the rest.
      Labels: { 'com.docker.stack.namespace': stack },
    });
    created.push(name);
  }
  return created;
}

/** Runs `cmd` in a container (`input` on its stdin); its exit code and output. */
export async function execIn(
  docker: Docker,
  container: string,
  cmd: readonly string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const exec = await docker.getContainer(container).exec({
    Cmd: [...cmd],
    AttachStdin: input !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: input !== undefined })) as NodeJS.ReadWriteStream;
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  docker.modem.demuxStream(stream, out, err);
  await new Promise<void>((resolve, reject) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', reject);
    if (input !== undefined) stream.end(input);
  });
  const { ExitCode } = (await exec.inspect()) as { ExitCode: number | null };
  return { code: ExitCode ?? -1, stdout, stderr };
}

/** A password, read where the secret is mounted (a container of the stack); held in memory only. */
export async function readSecret(docker: Docker, container: string, s: SecretName): Promise<string> {
  const r = await execIn(docker, container, ['cat', secretPath(s)]);
  if (r.code !== 0)
    throw new BenchError(
      'E_LAB',
      `cannot read the stack's secret ${s}: ${r.stderr.trim() || `exit ${r.code}`}`,
    );
  return r.stdout.trim();
}

/**
 * Sets the postgres role's password from the secret, inside the postgres container through its
 * local socket: the SQL reads the file itself, so the password is in no command and no log.
 */
export async function setPostgresPassword(docker: Docker, container: string): Promise<void> {
  const sql = `DO $$ BEGIN EXECUTE format('ALTER ROLE postgres PASSWORD %L', trim(both E' \\n' from pg_read_file('${secretPath(SECRETS.postgres)}'))); END $$;`;
  const r = await execIn(
    docker,
    container,
    ['psql', '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-q'],
    sql,
  );
  if (r.code !== 0)
    throw new BenchError(
      'E_LAB',
      `cannot set the postgres password from its secret: ${r.stderr.trim() || `exit ${r.code}`}`,
    );
}
