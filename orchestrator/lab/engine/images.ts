import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { COMPOSE_FILE } from './compose.js';

/** KEY=VALUE lines of a compose env file (comments and blank lines skipped, no quoting rules beyond stripping). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out[line.slice(0, eq).trim()] = line
      .slice(eq + 1)
      .trim()
      .replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/** Compose's `${VAR}`, `${VAR:-default}` and `${VAR-default}` interpolation (enough for image names). */
export function interpolate(s: string, env: Readonly<Record<string, string | undefined>>): string {
  return s.replace(/\$\{(\w+)(?:(:?)-([^}]*))?\}/g, (_m, name: string, colon: string, dflt?: string) => {
    const v = env[name];
    if (dflt === undefined) return v ?? '';
    if (v === undefined || (colon === ':' && v === '')) return dflt;
    return v;
  });
}

/** The image each service of the compose file uses, as compose would resolve it. */
export function serviceImages(
  env: Readonly<Record<string, string | undefined>>,
  file = COMPOSE_FILE,
): Record<string, string> {
  const doc = parse(readFileSync(file, 'utf8')) as { services?: Record<string, { image?: string }> };
  const out: Record<string, string> = {};
  for (const [name, svc] of Object.entries(doc.services ?? {}))
    if (typeof svc.image === 'string') out[name] = interpolate(svc.image, env);
  return out;
}
