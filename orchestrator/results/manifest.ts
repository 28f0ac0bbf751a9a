import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Lab } from '../lab/Lab.js';

const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The machine a figure was measured on: cite it with the figure. */
export function describeMachine() {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    node: process.version,
  };
}

export function metabenchVersion(): string {
  try {
    return (JSON.parse(readFileSync(`${PACKAGE_ROOT}package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The git revision of the metabench checkout, with "-dirty" when it has uncommitted changes; null outside git. */
export function gitRevision(): string | null {
  // Asked once per process: a sweep's points and a run's repetitions each wrote a manifest,
  // and each asked git twice (a tenth of a second of a simulated run).
  if (revision === undefined) revision = askGit();
  return revision;
}

let revision: string | null | undefined;

function askGit(): string | null {
  try {
    // One git for both: `# branch.oid` is HEAD's commit ("(initial)" before the first one,
    // where rev-parse HEAD failed), and any other line a tracked change. Two gits cost a
    // hundredth of a second more of a simulated run.
    const lines = execFileSync('git', ['status', '--porcelain=v2', '--branch', '--untracked-files=no'], {
      cwd: PACKAGE_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .split('\n')
      .filter((l) => l !== '');
    const rev = lines.find((l) => l.startsWith('# branch.oid '))?.slice('# branch.oid '.length);
    if (rev === undefined || !/^[0-9a-f]+$/.test(rev)) return null;
    const dirty = lines.some((l) => !l.startsWith('#'));
    return dirty ? `${rev}-dirty` : rev;
  } catch {
    return null;
  }
}

/**
 * What every manifest.json opens with, for a run or a calibration: which metabench, on
 * which machine, when, against which lab.
 */
export function provenance(startedAt: Date, lab: Pick<Lab, 'runtime' | 'topology' | 'pinning'>) {
  return {
    metabench: metabenchVersion(),
    gitRevision: gitRevision(),
    startedAt: startedAt.toISOString(),
    machine: describeMachine(),
    runtime: lab.runtime,
    topology: lab.topology(),
    // Which CPUs the generator and the lab ran on (the local runtime pins them apart).
    pinning: lab.pinning ?? { applied: false, reason: `runtime ${lab.runtime}` },
  };
}
