import type { BundleInfo } from './bundleInfo.js';
import type { RunManifest } from './manifest.js';

/** REPRODUCE.md of a bundle: the one command that re-runs it, and what that command keeps the same. */
export function reproduceMd(info: BundleInfo, m: RunManifest, bundleFile: string): string {
  const ran = info.ranWith;
  return [
    `# Reproducing ${info.experiment}`,
    '',
    'Re-run the experiment exactly as it ran (the resolved experiment in `experiment.json`,',
    'the same runtime, scale, seeds and repetitions):',
    '',
    '```sh',
    `metabench run --from-bundle ${bundleFile} --out reproduced`,
    '```',
    '',
    `- runtime: ${info.runtime}`,
    `- scale: ${info.scale} (every duration of the schedule and of the recovery criterion × ${info.scale})`,
    `- seed: ${info.seed}; repetitions: ${info.repeat} (run i uses the seed derived from it, as in the original)`,
    `- capacity for \`% capacity\` rates: ${info.capacity.usedPerS}/s (${info.capacity.from})`,
    info.command ? `- the original command: \`metabench ${info.command.join(' ')}\`` : '',
    '',
    `Ran with metabench ${ran.metabench} (git ${ran.gitRevision ?? 'unknown'}) on Node ${ran.node ?? 'unknown'},`,
    `${m.machine ? `${m.machine.cpus} × ${m.machine.cpuModel}, ${m.machine.os}` : 'machine not recorded'}.`,
    `Bundled by metabench ${info.exportedWith.metabench} (git ${info.exportedWith.gitRevision ?? 'unknown'}),`,
    `package-lock.json sha256 ${info.exportedWith.packageLockSha256 ?? 'unknown'}.`,
    '',
    'The original figures are in `results/` (summary.json, and each run’s manifest.json and',
    'summary.json). A simulated run (`runtime: sim`) is deterministic: its re-run writes the same',
    'summary.json. A lab run (local, docker) measures this machine, so its figures vary with it.',
    '',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');
}
