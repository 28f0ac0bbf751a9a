import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import { COMPOSE_FILE, readCompose } from '../lab/engine/compose.js';
import { parseEnvFile } from '../lab/engine/images.js';
import { kubernetesManifests } from '../lab/kubernetes/manifests.js';
import { manifestFiles, manifestStream, writeManifests } from '../lab/kubernetes/write.js';
import { MAX_REPLICAS } from '../lab/target.js';
import { wholeNumber } from './options.js';

interface ManifestFlags {
  kubernetes?: boolean;
  out?: string;
  replicas: number;
  envFile?: string;
}

/** `metabench lab manifests --kubernetes`: the lab as Kubernetes objects, on paper (no cluster is asked anything). */
export function registerManifests(lab: Command): void {
  lab
    .command('manifests')
    .description(
      'write the lab as Kubernetes manifests (Deployments, Services, NetworkPolicies, a Secret, ConfigMaps), generated from docker-compose.yml',
    )
    .option('--kubernetes', 'Kubernetes manifests (the one kind so far)')
    .option('--out <DIR>', 'one file per object in DIR (default: one YAML stream on stdout)')
    .option(
      '--replicas <N>',
      'api replicas: Deployments api, api1…, each with its own seed',
      wholeNumber('--replicas', 1, MAX_REPLICAS),
      1,
    )
    .option('--env-file <FILE>', 'image and port overrides (METABENCH_*), as for lab up (docker/offline.env)')
    .action((o: ManifestFlags) => {
      if (!o.kubernetes)
        throw new BenchError('E_USAGE', 'lab manifests: say which kind: --kubernetes (the one there is)');
      const env = { ...(o.envFile ? parseEnvFile(readEnvFile(o.envFile)) : {}), ...process.env };
      const objects = kubernetesManifests(readCompose(COMPOSE_FILE), { replicas: o.replicas, env });
      if (o.out === undefined) {
        process.stdout.write(manifestStream(objects));
        return;
      }
      const files = manifestFiles(objects);
      writeManifests(o.out, files);
      const secret = files.find((f) => f.secret)?.name;
      process.stdout.write(
        `lab manifests: ${files.length} objects in ${o.out} (kubectl apply -f ${o.out}); ${secret} holds the generated passwords, readable by you only\n`,
      );
    });
}

function readEnvFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new BenchError(
      'E_USAGE',
      `--env-file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}
