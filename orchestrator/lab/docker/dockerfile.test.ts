import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// docker/api/Dockerfile is what a user's `lab up` builds: it must copy everything the build
// compiles and everything the image reads at run time. Its build context is .dockerignore's
// allowlist, copied whole. Derived from tsconfig.json and the repository's own tree, so a new
// top-level folder fails here until it is either let in or named below as one the image does
// not need.

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

/** Top-level folders the api image does not need, and why. */
const NOT_IN_IMAGE: Record<string, string> = {
  docs: 'documentation',
  docker: 'the Dockerfiles themselves and the offline stand-ins',
  grafana: 'mounted into the Grafana container by the compose file',
  prometheus: 'mounted into the Prometheus container by the compose file',
  toxiproxy: 'mounted into the Toxiproxy container by the compose file',
  scripts: 'host-side build scripts',
  node_modules: 'installed by npm ci in the build stage',
  dist: 'compiled in the build stage',
  results: 'run output',
};

/** What the running image reads besides dist/ (the services' and the CLI's data files). */
const RUNTIME_PATHS = ['services/llm-stub/profiles', 'experiments', 'schema'];

interface Stage {
  from: string;
  /** COPY sources from the build context (no --from). */
  copies: string[];
  /** COPY --from=<stage> sources. */
  fromStage: string[];
  runs: string[];
}

function stages(dockerfile: string): Stage[] {
  const out: Stage[] = [];
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [instr, ...rest] = line.split(/\s+/);
    const op = instr!.toUpperCase();
    if (op === 'FROM') out.push({ from: rest.join(' '), copies: [], fromStage: [], runs: [] });
    const cur = out[out.length - 1];
    if (!cur) continue;
    if (op === 'COPY') {
      const flags = rest.filter((a) => a.startsWith('--'));
      const args = rest.filter((a) => !a.startsWith('--'));
      const sources = args.slice(0, -1).map((s) => s.replace(/^\.\//, '').replace(/\/$/, ''));
      if (flags.some((f) => f.startsWith('--from='))) cur.fromStage.push(...sources);
      else cur.copies.push(...sources);
    }
    if (op === 'RUN') cur.runs.push(rest.join(' '));
  }
  return out;
}

const dockerfile = readFileSync(join(REPO, 'docker', 'api', 'Dockerfile'), 'utf8');
const [build, runtime] = stages(dockerfile) as [Stage, Stage];
const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')) as { include: string[] };
const ignoreRules = readFileSync(join(REPO, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
/** The paths .dockerignore lets into the build context (it is an allowlist: "*", then "!PATH" lines). */
const allowed = ignoreRules.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));

test('Dockerfile: two stages, each on a base image given by a build argument', () => {
  assert.equal(stages(dockerfile).length, 2);
  assert.match(dockerfile, /^ARG BASE_IMAGE=node:20-bookworm-slim$/m);
  assert.match(dockerfile, /^ARG BUILD_IMAGE=node:20-bookworm-slim$/m);
  assert.equal(build.from, '${BUILD_IMAGE} AS build');
  assert.equal(runtime.from, '${BASE_IMAGE}');
  assert.ok(
    build.runs.some((r) => r.includes('npm ci')),
    'the build stage installs the lockfile',
  );
  assert.ok(
    build.runs.some((r) => r.includes('npm run build')),
    'the build stage compiles',
  );
});

test('the build context is an allowlist, and the build stage copies all of it', () => {
  assert.equal(ignoreRules[0], '*', '.dockerignore starts by leaving everything out');
  assert.ok(build.copies.includes('.'), 'the build stage copies the whole (allowlisted) context');
});

test('Dockerfile: the build gets every folder tsconfig.json compiles, and what npm needs', () => {
  assert.ok(tsconfig.include.length > 0);
  for (const dir of tsconfig.include)
    assert.ok(allowed.includes(dir), `.dockerignore lets ${dir}/ in (tsconfig.json compiles it)`);
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json'])
    assert.ok(allowed.includes(f), `.dockerignore lets ${f} in`);
  assert.deepEqual(
    build.copies.slice(0, 2),
    ['package.json', 'package-lock.json'],
    'the lockfile first, for the layer cache',
  );
});

test('Dockerfile: the runtime stage has dist/, node_modules and the files read at run time', () => {
  assert.deepEqual(runtime.fromStage, ['/out'], 'the runtime stage takes /out from the build stage');
  const gather = build.runs.find((r) => r.includes('/out'))!;
  for (const p of ['package.json', 'node_modules', 'dist', ...RUNTIME_PATHS]) {
    assert.match(
      gather,
      new RegExp(`cp -r [^&]*\\b${p.replace(/\//g, '\\/')}\\b[^&]* /out/`),
      `${p} is gathered into /out`,
    );
    assert.ok(
      allowed.includes(p.split('/')[0]!) || p === 'dist' || p === 'node_modules',
      `${p} is in the context`,
    );
  }
  // The llm-stub's default profile, the path services/llm-stub/profile.ts resolves.
  assert.ok(statSync(join(REPO, 'services/llm-stub/profiles/default.yaml')).isFile());
});

test('every top-level folder is either in the build context or named as not needed', () => {
  const folders = readdirSync(REPO).filter(
    (n) => !n.startsWith('.') && statSync(join(REPO, n)).isDirectory(),
  );
  for (const f of folders)
    assert.ok(
      allowed.includes(f) || f in NOT_IN_IMAGE,
      `top-level folder ${f}/ is neither let in by .dockerignore nor listed in NOT_IN_IMAGE`,
    );
  for (const f of allowed) assert.ok(!(f in NOT_IN_IMAGE), `${f} is let in and also listed as not needed`);
});

test('compose builds the api from this Dockerfile, and the llm-stub runs the same image', () => {
  const compose = parse(readFileSync(join(REPO, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string; build?: { context: string; dockerfile: string } }>;
  };
  assert.deepEqual(compose.services.api!.build, { context: '.', dockerfile: 'docker/api/Dockerfile' });
  assert.equal(compose.services['llm-stub']!.image, compose.services.api!.image);
});

test('the offline script builds the api image from docker/api/Dockerfile, its bases as build arguments', () => {
  const script = readFileSync(join(REPO, 'scripts', 'build-offline-images.sh'), 'utf8');
  assert.match(script, /docker build [^\n]*-f docker\/api\/Dockerfile/);
  assert.match(script, /--build-arg "BASE_IMAGE=\$NODE_IMAGE" --build-arg "BUILD_IMAGE=\$DEPS_IMAGE" \. /);
  assert.doesNotMatch(script, /api\.Dockerfile/, 'no second api Dockerfile copying dist/');
});

test('each offline stand-in names the official image and version it stands for, and what differs', () => {
  const compose = parse(readFileSync(join(REPO, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string }>;
  };
  /** The compose default of `${METABENCH_X_IMAGE:-default}`. */
  const official = (service: string): string => /:-([^}]+)\}/.exec(compose.services[service]!.image!)![1]!;
  const standIns: Record<string, string> = {
    'postgres.Dockerfile': official('postgres'),
    'redis.Dockerfile': official('redis'),
    'prometheus.Dockerfile': official('prometheus'),
    'faultproxy.Dockerfile': official('toxiproxy'),
    'node.Dockerfile': /^ARG BASE_IMAGE=(\S+)$/m.exec(dockerfile)![1]!,
  };
  for (const [file, image] of Object.entries(standIns)) {
    const text = readFileSync(join(REPO, 'docker', 'offline', file), 'utf8');
    const head = text
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join(' ')
      .replace(/#\s*/g, '');
    assert.ok(head.includes(`Stands in for the official ${image} image`), `${file} names ${image}`);
    assert.match(head, /Differs: /, `${file} says what differs`);
  }
  // Where a trigger sees it: the stop signal and the data directories as volumes.
  const pg = readFileSync(join(REPO, 'docker', 'offline', 'postgres.Dockerfile'), 'utf8');
  assert.match(pg, /^STOPSIGNAL SIGINT$/m);
  assert.match(pg, /^VOLUME \/var\/lib\/postgresql\/data$/m);
  assert.match(readFileSync(join(REPO, 'docker', 'offline', 'redis.Dockerfile'), 'utf8'), /^VOLUME \/data$/m);
  assert.match(
    readFileSync(join(REPO, 'docker', 'offline', 'prometheus.Dockerfile'), 'utf8'),
    /^VOLUME \/prometheus$/m,
  );
});
