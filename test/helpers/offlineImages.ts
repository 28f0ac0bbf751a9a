import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { parseEnvFile } from '../../orchestrator/lab/engine/images.js';
import { REPO } from './cli.js';

/**
 * The env file scripts/build-offline-images.sh writes into the checkout it runs in;
 * METABENCH_OFFLINE_ENV names it when that was another checkout.
 */
export const OFFLINE_ENV_FILE = process.env.METABENCH_OFFLINE_ENV || join(REPO, 'docker', 'offline.env');

/** Why the offline images cannot be used here (no env file, an image not built), or undefined when they can. */
export async function offlineImagesMissing(
  docker: Docker,
  envFile = OFFLINE_ENV_FILE,
): Promise<string | undefined> {
  if (!existsSync(envFile))
    return `${envFile} is absent: run scripts/build-offline-images.sh (or set METABENCH_OFFLINE_ENV)`;
  for (const [name, image] of Object.entries(parseEnvFile(readFileSync(envFile, 'utf8'))))
    if (name.endsWith('_IMAGE'))
      try {
        await docker.getImage(image).inspect();
      } catch {
        return `${image} (${name} in ${envFile}) is not built: run scripts/build-offline-images.sh`;
      }
  return undefined;
}

/** Why a Docker test cannot run here: no engine answers, or the offline images are not there; undefined when it can. */
export async function engineOrImagesMissing(
  docker: Docker,
  envFile = OFFLINE_ENV_FILE,
): Promise<string | undefined> {
  try {
    await docker.ping();
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message}); .ci/run starts one where it can`;
  }
  return offlineImagesMissing(docker, envFile);
}
