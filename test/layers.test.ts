import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';

// The layer rules of docs/architecture.md (.dependency-cruiser.cjs, run by `npm run lint`):
// they must catch a wrong import and a cycle, and the repository must pass them.

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const config = createRequire(import.meta.url)(join(REPO, '.dependency-cruiser.cjs')) as IConfiguration;
const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')) as { include: string[] };

/** Cruises `folders` of `baseDir` with the repository's rules; the violations as "rule: from -> to". */
async function violations(baseDir: string, folders: readonly string[]): Promise<string[]> {
  const r = await cruise([...folders], {
    ...config.options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
  });
  const out = r.output as ICruiseResult;
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

/** A tree of one-line modules: path → the relative modules it imports (`type:` for a type-only import). */
function writeTree(root: string, files: Record<string, string[]>): void {
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(join(root, dirname(file)), { recursive: true });
    const lines = imports.map((i, n) =>
      i.startsWith('type:')
        ? `import type { T as T${n} } from '${i.slice(5)}';`
        : `import { x as x${n} } from '${i}';`,
    );
    const uses = imports.map((i, n) => (i.startsWith('type:') ? `T${n}` : `typeof x${n}`));
    writeFileSync(
      join(root, file),
      [...lines, 'export const x = 1;', `export type T = ${['number', ...uses].join(' | ')};`, ''].join('\n'),
    );
  }
}

test('the layer rules report an import against the layers and a cycle, and let the right ones through', async () => {
  const root = mkdtempSync(join(tmpdir(), 'metabench-layers-'));
  try {
    writeTree(root, {
      'foundation/units.ts': [],
      'bench/driver.ts': ['../foundation/units.js', '../orchestrator/run/runOnce.js'],
      // A test may import whatever it exercises.
      'bench/driver.test.ts': ['./driver.js', '../orchestrator/run/runOnce.js'],
      'services/api/server.ts': ['../../foundation/units.js', '../faultproxy/proxy.js'],
      'services/faultproxy/proxy.ts': ['../../foundation/units.js'],
      'orchestrator/lab/RuntimePlugin.ts': ['../spec/plan.js'],
      'orchestrator/spec/plan.ts': ['../../foundation/units.js'],
      'orchestrator/run/runOnce.ts': ['../lab/RuntimePlugin.js', '../../sim/runtime.js'],
      'sim/runtime.ts': ['../orchestrator/lab/RuntimePlugin.js', './SimLab.js'],
      // A cycle through a type-only import is still a cycle.
      'sim/SimLab.ts': ['type:./runtime.js'],
      'sim/series.ts': ['type:../orchestrator/run/runOnce.js'],
      'orchestrator/cli/runtimes.ts': ['../../sim/runtime.js', '../run/runOnce.js'],
      // Every runtime folder is covered (swarm too): it may use the shared engine code, not another runtime.
      'orchestrator/lab/swarm/SwarmLab.ts': ['../engine/DockerLab.js', '../docker/runtime.js'],
      'orchestrator/lab/docker/runtime.ts': ['../engine/DockerLab.js', '../RuntimePlugin.js'],
      'orchestrator/lab/engine/DockerLab.ts': ['../Lab.js'],
      'orchestrator/lab/engine/stack.ts': ['../swarm/stack.js'],
      'orchestrator/lab/swarm/stack.ts': [],
      'orchestrator/lab/Lab.ts': [],
      // The triggers sit in the lab's interface: the spec derives its union from their registry.
      'orchestrator/spec/schedule.ts': ['../trigger/registry.js'],
      'orchestrator/trigger/registry.ts': ['../lab/Lab.js', '../run/runOnce.js'],
    });
    assert.deepEqual(await violations(root, ['foundation', 'bench', 'services', 'orchestrator', 'sim']), [
      'core-reaches-runtimes-by-registry: orchestrator/run/runOnce.ts -> sim/runtime.ts',
      'engine-below-runtimes: orchestrator/lab/engine/stack.ts -> orchestrator/lab/swarm/stack.ts',
      'lab-interface-below-runtimes: orchestrator/trigger/registry.ts -> orchestrator/run/runOnce.ts',
      'load-engine-on-foundation: bench/driver.ts -> orchestrator/run/runOnce.ts',
      'no-circular: sim/runtime.ts -> sim/SimLab.ts',
      'runtimes-below-orchestrator: sim/series.ts -> orchestrator/run/runOnce.ts',
      'runtimes-independent: orchestrator/lab/swarm/SwarmLab.ts -> orchestrator/lab/docker/runtime.ts',
      'services-on-foundation: services/api/server.ts -> services/faultproxy/proxy.ts',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the repository keeps its layers: no import against them, no cycle', async () => {
  assert.deepEqual(await violations(REPO, tsconfig.include), []);
  // `npm run lint` cruises the same folders.
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  assert.match(pkg.scripts.lint!, /npm run lint:layers/);
  assert.equal(
    pkg.scripts['lint:layers'],
    `depcruise --config .dependency-cruiser.cjs ${tsconfig.include.join(' ')}`,
  );
});
