import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { STACK_LABEL } from '../../orchestrator/lab/swarm/SwarmLab.js';

/**
 * A second Docker engine on this machine that Swarm takes for another machine: its own
 * network namespace (a veth pair, HOST_ADDR on this side, NODE_ADDR inside), its own hostname
 * (a UTS namespace), data root, exec root, pid file, socket and managed containerd, no
 * iptables rules. Joined to a swarm as a worker it runs tasks the manager places on it,
 * publishes their ports at NODE_ADDR and carries the stack's overlay network over VXLAN
 * between the two namespaces.
 *
 * Every name is fixed, so `reclaim()` (run before starting) removes what a killed test left;
 * `stop()` undoes everything and is synchronous, so it also runs from a process 'exit' handler.
 */

export const NODE_NAME = 'metabench-node2';
const NETNS = NODE_NAME;
/** The veth pair's ends (at most 15 characters: the kernel's limit on interface names). */
export const VETH_HOST = 'mbnode2-host';
const VETH_NODE = 'mbnode2-node';
export const HOST_ADDR = '10.77.0.1';
export const NODE_ADDR = '10.77.0.2';
const RUN_DIR = `/run/${NODE_NAME}`;
const DATA_ROOT = `/var/lib/${NODE_NAME}`;
export const NODE_SOCKET = `${RUN_DIR}/docker.sock`;
/** How the orchestrator reaches the node's engine: its `metabench.engine` node label. */
export const NODE_ENGINE = `unix://${NODE_SOCKET}`;
const PID_FILE = `${RUN_DIR}/docker.pid`;
export const NODE_LOG = `${RUN_DIR}/dockerd.log`;

export interface SecondEngine {
  /** The engine's API, through its socket. */
  readonly docker: Docker;
  /** dockerd's process id. */
  readonly pid: number;
  /** Runs the docker CLI against this engine; throws with its error output on failure. */
  cli(args: readonly string[]): string;
  /** Everything undone: swarm left, dockerd and its containerd stopped, namespace, veth, data root gone. */
  stop(): void;
}

/** Runs a command; its stdout, or an Error naming the command and its stderr. */
export function sh(cmd: string, args: readonly string[], input?: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, maxBuffer: 16 << 20 });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')}: exit ${r.status ?? r.signal}: ${(r.stderr || r.error?.message || '').trim()}`,
    );
  return r.stdout;
}

const quiet = (cmd: string, args: readonly string[]): void => {
  spawnSync(cmd, args, { stdio: 'ignore' });
};

/** Why a second engine cannot start here (not root, a tool missing, the subnet taken), or undefined. */
export function secondEngineUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a second engine needs root (network namespaces, dockerd)';
  for (const tool of ['ip', 'nsenter', 'unshare', 'dockerd', 'docker'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not on PATH`;
  const route = spawnSync('ip', ['-o', 'route', 'show', 'to', 'match', NODE_ADDR], {
    encoding: 'utf8',
  }).stdout;
  const taken = route
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('default') && !l.includes(VETH_HOST));
  if (taken.length > 0) return `${NODE_ADDR} is already routed on this machine (${taken[0]!.trim()})`;
  return undefined;
}

/** Synchronous sleep (for the 'exit' handler's waits). */
const pause = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/**
 * Whether a process still runs. A zombie does not: dockerd is this process's child, and a
 * synchronous wait keeps node from reaping it, so kill(pid, 0) alone would wait out the
 * whole timeout.
 */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Sends SIGTERM, waits up to `ms`, then SIGKILL. */
function terminate(pid: number, ms: number): void {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  for (const until = Date.now() + ms; alive(pid) && Date.now() < until;) pause(200);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const until = Date.now() + 5000; alive(pid) && Date.now() < until;) pause(100);
}

/** A process's command line ('' once it is gone). */
const cmdlineOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

const pidIn = (file: string): number | undefined => {
  const n = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  return Number.isInteger(n) && n > 0 ? n : undefined;
};

/**
 * Removes whatever a second engine left: leaves its swarm, stops dockerd and its containerd
 * (and any containerd-shim of its containers), unmounts what it mounted, deletes the
 * namespace, the veth pair, the exec root and the data root. Idempotent.
 */
export function reclaim(lap: (step: string, ms: number) => void = () => {}): void {
  let t = Date.now();
  const done = (step: string): void => {
    lap(step, Date.now() - t);
    t = Date.now();
  };
  if (existsSync(NODE_SOCKET)) quiet('docker', ['-H', NODE_ENGINE, 'swarm', 'leave', '--force']);
  const dockerd = pidIn(PID_FILE);
  if (dockerd !== undefined) terminate(dockerd, 20_000);
  done('swarm left, dockerd stopped');
  // Its containerd and shims are found by their command line (they name our exec root), by pid.
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && pid !== process.pid && cmdlineOf(pid).includes(`${RUN_DIR}/`))
      terminate(pid, 5000);
  }
  done('containerd and shims stopped');
  // Deepest first: overlay mounts, shm, the netns files docker bind-mounts under its exec root.
  const mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m.startsWith(`${DATA_ROOT}/`) || m === DATA_ROOT || m.startsWith(`${RUN_DIR}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) quiet('umount', ['-l', m]);
  done('unmounted');
  quiet('ip', ['netns', 'delete', NETNS]);
  quiet('ip', ['link', 'delete', VETH_HOST]);
  done('namespace and veth deleted');
  // rm, not rmSync: the data root holds an image's tens of thousands of files; and
  // --one-file-system leaves alone whatever could not be unmounted.
  if (existsSync(RUN_DIR) || existsSync(DATA_ROOT))
    quiet('rm', ['-rf', '--one-file-system', RUN_DIR, DATA_ROOT]);
  done('folders removed');
}

/** The storage driver of the engine at `docker` (overlay2 where the first engine uses it, else vfs). */
async function storageDriver(docker: Docker): Promise<string> {
  const driver = ((await docker.info()) as { Driver?: string }).Driver;
  return driver === 'overlay2' ? 'overlay2' : 'vfs';
}

/**
 * Starts the second engine (after reclaiming leftovers) and waits until it answers. `like`
 * is the first engine: the second uses its storage driver when that is overlay2.
 */
export async function startSecondEngine(like: Docker, timeoutMs = 60_000): Promise<SecondEngine> {
  reclaim();
  const driver = await storageDriver(like);
  try {
    sh('ip', ['netns', 'add', NETNS]);
    sh('ip', ['link', 'add', VETH_HOST, 'type', 'veth', 'peer', 'name', VETH_NODE]);
    sh('ip', ['link', 'set', VETH_NODE, 'netns', NETNS]);
    sh('ip', ['addr', 'add', `${HOST_ADDR}/24`, 'dev', VETH_HOST]);
    sh('ip', ['link', 'set', VETH_HOST, 'up']);
    const inNs = (...a: string[]): string => sh('ip', ['netns', 'exec', NETNS, 'ip', ...a]);
    inNs('addr', 'add', `${NODE_ADDR}/24`, 'dev', VETH_NODE);
    inNs('link', 'set', VETH_NODE, 'up');
    inNs('link', 'set', 'lo', 'up');
    mkdirSync(RUN_DIR, { recursive: true });
    mkdirSync(DATA_ROOT, { recursive: true });
    // The data root on a tmpfs: removing an image's tens of thousands of files from the disk
    // took 58 s after a run on this machine (rm -rf); a tmpfs goes with its unmount.
    sh('mount', ['-t', 'tmpfs', '-o', 'size=4g,mode=0711', NODE_NAME, DATA_ROOT]);
    const dockerd = [
      'dockerd',
      `--data-root=${DATA_ROOT}`,
      `--exec-root=${RUN_DIR}/exec`,
      `--pidfile=${PID_FILE}`,
      `--host=${NODE_ENGINE}`,
      '--iptables=false',
      '--ip6tables=false',
      `--storage-driver=${driver}`,
      `--cgroup-parent=/${NODE_NAME}`,
    ];
    // nsenter --net, not `ip netns exec`: the latter also remounts /sys in a mount namespace
    // of its own, hiding the cgroup mounts ("Devices cgroup isn't mounted"). Bash (dash takes no fd past 9) closes
    // every inherited descriptor past stderr first: a test run under `flock LOCK node …`
    // hands the lock's descriptor to its children, and a dockerd holding it would keep the
    // lock after the test.
    const script = [
      `for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done`,
      `hostname ${NODE_NAME}`,
      `exec nsenter --net=/run/netns/${NETNS} ${dockerd.join(' ')}`,
    ].join('\n');
    const log = openSync(NODE_LOG, 'a');
    const child = spawn('unshare', ['--uts', 'bash', '-c', script], {
      stdio: ['ignore', log, log],
      detached: true,
    });
    closeSync(log);
    child.unref();
    const docker = new Docker({ socketPath: NODE_SOCKET });
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`dockerd exited (${child.exitCode}): ${tail(NODE_LOG)}`);
      try {
        await docker.ping();
        break;
      } catch {
        if (Date.now() > until)
          throw new Error(`dockerd did not answer in ${timeoutMs / 1000} s: ${tail(NODE_LOG)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    return {
      docker,
      pid: child.pid!,
      cli: (args) => sh('docker', ['-H', NODE_ENGINE, ...args]),
      stop: () => reclaim(),
    };
  } catch (err) {
    reclaim();
    throw err;
  }
}

/** The last lines of a log, for an error message. */
function tail(file: string, lines = 5): string {
  return existsSync(file)
    ? readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ')
    : '(no log)';
}

/**
 * Joins the second engine to the swarm whose manager is the first engine (initialised with
 * `--advertise-addr HOST_ADDR`) as a worker, and labels its node on the manager: `labels`,
 * and `metabench.engine` saying how the orchestrator reaches its containers. Returns the
 * node's id once the manager lists it ready.
 */
export async function joinAsWorker(
  manager: Docker,
  node: SecondEngine,
  labels: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
): Promise<string> {
  const token = sh('docker', ['swarm', 'join-token', '--quiet', 'worker']).trim();
  node.cli(['swarm', 'join', '--token', token, '--advertise-addr', NODE_ADDR, `${HOST_ADDR}:2377`]);
  const id = ((await node.docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID;
  if (!id) throw new Error('the second engine joined the swarm but reports no node id');
  const add = Object.entries({ ...labels, 'metabench.engine': NODE_ENGINE }).flatMap(([k, v]) => [
    '--label-add',
    `${k}=${v}`,
  ]);
  sh('docker', ['node', 'update', ...add, id]);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const n = (await manager.getNode(id).inspect()) as { Status?: { State?: string } };
    if (n.Status?.State === 'ready') return id;
    if (Date.now() > until)
      throw new Error(`node ${id} not ready after ${timeoutMs / 1000} s (${n.Status?.State})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Copies images from the first engine into the second (`docker save | docker load`): Swarm ships none between nodes. */
export function loadImages(images: readonly string[]): void {
  const r = spawnSync(
    'bash',
    ['-c', `set -o pipefail; docker save "$@" | docker -H ${NODE_ENGINE} load --quiet`, 'load', ...images],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`docker save ${images.join(' ')} | docker load: ${r.stderr.trim()}`);
}

/** What a stack left on a worker's engine: containers, networks and volumes with its label (a worker lists no services or configs). */
export async function leftOnWorker(docker: Docker, stack: string): Promise<string[]> {
  const filters = { label: [`${STACK_LABEL}=${stack}`] };
  const [containers, networks, volumes] = await Promise.all([
    docker.listContainers({ all: true, filters }),
    docker.listNetworks({ filters }),
    docker.listVolumes({ filters }),
  ]);
  return [
    ...containers.map((c) => `container ${c.Names[0] ?? c.Id}`),
    ...networks.map((n) => `network ${n.Name}`),
    ...(volumes.Volumes ?? []).map((v) => `volume ${v.Name}`),
  ];
}

/** The data root and the run folder, for a test to check they are gone. */
export const NODE_PATHS = [DATA_ROOT, RUN_DIR, join('/run/netns', NETNS)] as const;
