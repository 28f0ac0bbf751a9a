import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertClaimed, experimentPath } from '../helpers/catalogue.js';
import { runRealServerRow } from '../helpers/realServer.js';
import { assertTwinAgrees } from '../helpers/twin.js';

// The CI share's real-server row (issue 34's acceptance): the retry storm on PHP-FPM behind
// nginx, started by metabench from Debian's packages on the local runtime, at the suite's
// scale (about 2 minutes). The other rows on real servers are in real-servers.test.ts.

test('php-fpm-retry-storm is metastable on PHP-FPM: amplification >= 2, goodput < 50% of the baseline, the server receiving it', async () => {
  const { s, out } = await runRealServerRow('php-fpm-retry-storm');
  assertClaimed('php-fpm-retry-storm', s);
  assert.ok(
    s.afterTrigger.amplification! >= 2,
    `client amplification after the trigger: ${s.afterTrigger.amplification}`,
  );
  assert.ok(
    s.afterTrigger.goodputPerS! < 0.5 * s.baseline.goodputPerS!,
    `goodput ${s.afterTrigger.goodputPerS} vs baseline ${s.baseline.goodputPerS}`,
  );
  // nginx counted the retries (its stub_status requests): the server saw the storm.
  assert.ok(
    s.afterTrigger.amplificationServer! > 1.5,
    `server amplification ${s.afterTrigger.amplificationServer}`,
  );
  assert.match(s.sustainingEffect ?? '', /the api receives .* against a capacity of 160\/s/);
  for (const f of ['figures/throughput.svg', 'figures/amplification.svg'])
    assert.ok(existsSync(join(out, f)), f);
  const manifest = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
    topology: { components: { name: string; config?: { server?: { kind: string } } }[] };
  };
  assert.equal(manifest.topology.components[0]?.config?.server?.kind, 'php-fpm');
  // The simulation models PHP-FPM's static pool as the api's fixed FIFO pool: the same class.
  await assertTwinAgrees(experimentPath('php-fpm-retry-storm'), s);
});
