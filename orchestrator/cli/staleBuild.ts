import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** scripts/build.mjs: what `npm install` runs to build dist/, and what tells whether it is stale. */
const BUILD_SCRIPT = new URL('../../../scripts/build.mjs', import.meta.url);

/**
 * The warning for a CLI run from a source checkout whose sources changed since dist/ was
 * built, or undefined. The CLI never builds (a run would start 30 s late, silently):
 * it says what changed and what to type.
 */
export async function staleBuildWarning(root?: string): Promise<string | undefined> {
  if (!existsSync(fileURLToPath(BUILD_SCRIPT))) return undefined;
  const { staleSources, describeStale } = (await import(BUILD_SCRIPT.href)) as {
    staleSources(root?: string): string[];
    describeStale(stale: string[]): string;
  };
  const stale = staleSources(root);
  return stale.length
    ? `metabench: dist/ is older than the sources (${describeStale(stale)}): this runs the last build; \`npm run build\` compiles what changed (about 30 s)\n`
    : undefined;
}
