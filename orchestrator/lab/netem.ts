import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Packet-level loss and delay on a container's interface (trigger kind `netem`, the Docker
 * runtime): the kernel's netem qdisc, set from the host inside the container's network
 * namespace (`nsenter -t <pid> -n tc qdisc add dev eth0 root netem …`) and removed with
 * `tc qdisc del dev eth0 root`. It needs the kernel's sch_netem module: netemSupport says
 * whether this machine has it, before a run starts.
 */

/** What the netem qdisc does: a delay (± jitter) on every packet, a loss probability per packet. */
export interface NetemSpec {
  readonly delayMs?: number | undefined;
  readonly jitterMs?: number | undefined;
  /** 0..1 */
  readonly loss?: number | undefined;
}

/** The container's interface the qdisc goes on (compose's network gives each container eth0). */
export const NETEM_IFACE = 'eth0';

/** The netem qdisc's arguments: `netem delay 100ms 10ms loss 5%`. */
export function netemArgs(s: NetemSpec): string[] {
  const out = ['netem'];
  if (s.delayMs !== undefined && s.delayMs > 0) {
    out.push('delay', `${s.delayMs}ms`);
    if (s.jitterMs) out.push(`${s.jitterMs}ms`);
  }
  // tc reads a percentage; netem's resolution is 1/2^32, so 6 decimals of a percent lose nothing here.
  if (s.loss !== undefined && s.loss > 0) out.push('loss', `${+(s.loss * 100).toFixed(6)}%`);
  if (out.length === 1) throw new RangeError('a netem qdisc needs a delay or a loss');
  return out;
}

/** The command that puts the qdisc on `iface` of the network namespace of `pid`. */
export function netemAddCommand(pid: number, s: NetemSpec, iface = NETEM_IFACE): string[] {
  return ['nsenter', '-t', String(pid), '-n', 'tc', 'qdisc', 'add', 'dev', iface, 'root', ...netemArgs(s)];
}

/** The command that takes it off again (the interface's default qdisc comes back). */
export function netemDelCommand(pid: number, iface = NETEM_IFACE): string[] {
  return ['nsenter', '-t', String(pid), '-n', 'tc', 'qdisc', 'del', 'dev', iface, 'root'];
}

/** tc's answer when there is no root qdisc of ours to delete: the undo has nothing left to do. */
export function nothingToDelete(stderr: string): boolean {
  return /No such file or directory|Cannot delete qdisc with handle of zero|Cannot find device/i.test(stderr);
}

/** Runs a command line; its exit status and stderr. */
export type Runner = (argv: readonly string[]) => { status: number | null; stderr: string; error?: string };

export const runCommand: Runner = (argv) => {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000 });
  return { status: r.status, stderr: r.stderr ?? '', ...(r.error ? { error: r.error.message } : {}) };
};

/**
 * Whether this kernel offers the netem qdisc: undefined when it does, else why not, in words
 * that name the module. Loaded (or built in) shows as /sys/module/sch_netem; otherwise a
 * probe adds one on the loopback of a throwaway network namespace (`unshare -n`, with a user
 * namespace when not root), which loads the module on demand where it exists, and fails with
 * "Specified qdisc kind is unknown" where it does not.
 */
export function netemMissing(
  o: { sysModule?: string; run?: Runner; root?: boolean } = {},
): string | undefined {
  const sys = o.sysModule ?? '/sys/module/sch_netem';
  if (existsSync(sys)) return undefined;
  const run = o.run ?? runCommand;
  const root = o.root ?? process.getuid?.() === 0;
  const probe = [
    'unshare',
    ...(root ? ['-n'] : ['-r', '-n']),
    ...'tc qdisc add dev lo root netem delay 1ms'.split(' '),
  ];
  const r = run(probe);
  if (r.status === 0) return undefined;
  const said = (r.error ?? r.stderr).trim().split('\n')[0] ?? '';
  if (r.error === undefined && /qdisc kind is unknown|unknown qdisc/i.test(said))
    return `this kernel has no sch_netem module (${sys} is absent, and \`${probe.join(' ')}\` answered "${said}"): load it (modprobe sch_netem) or use a kernel built with CONFIG_NET_SCH_NETEM`;
  return `could not tell whether this kernel has the sch_netem module (${sys} is absent, and \`${probe.join(' ')}\` failed: "${said || `exit ${r.status}`}")`;
}
