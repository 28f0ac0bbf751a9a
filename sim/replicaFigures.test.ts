import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../test/helpers/cli.js';

// A run with api replicas draws each replica's series beside their sum in the server
// figure (DESIGN.md: per-replica series where there are replicas). The whole path, as a
// user runs it: a simulated run of a catalogue file, its figures' Vega-Lite specs read back.

interface Row {
  t_s: number;
  series: string;
  value: number | null;
}
interface Layer {
  data?: { values?: Row[] };
  encoding?: { y?: { title?: string }; color?: { scale?: { domain?: string[] } } };
}

/** The data layer of the panel whose y axis is `yTitle`: its series (the colour domain) and rows. */
function panel(spec: { vconcat: { layer: Layer[] }[] }, yTitle: string): { series: string[]; rows: Row[] } {
  const layer = spec.vconcat.flatMap((c) => c.layer).find((l) => l.encoding?.y?.title === yTitle);
  assert.ok(layer, `no panel "${yTitle}"`);
  return { series: layer.encoding?.color?.scale?.domain ?? [], rows: layer.data?.values ?? [] };
}

test('two simulated api replicas: the server figure draws each replica, labelled, beside their sum', async () => {
  const out = join(tempDir('replica-figures'), 'run');
  const r = await runCli([
    'run',
    'experiments/lb-herding.yaml',
    '--runtime',
    'sim',
    '--scale',
    '0.1',
    '--any-scale',
    '--set',
    'lab.api.replicas=2',
    '--set',
    'schedule.trigger.target=api[1]',
    '--events',
    'none',
    '--quiet',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const spec = JSON.parse(readFileSync(join(out, 'figures/server.vl.json'), 'utf8')) as {
    vconcat: { layer: Layer[] }[];
  };
  const panels = [
    ['queue depth (requests)', 'queue depth'],
    ['busy workers (workers)', 'busy workers'],
    ['received (req/s)', 'received'],
    ['completed (req/s)', 'completed'],
  ] as const;
  assert.equal(spec.vconcat.length, panels.length);
  for (const [yTitle, noun] of panels) {
    const { series, rows } = panel(spec, yTitle);
    const sum = `${noun} (all replicas)`;
    const each = [`${noun}, replica 0`, `${noun}, replica 1`];
    assert.deepEqual(series, [sum, ...each], yTitle);
    // Each second's sum is the replicas' sum (the simulation answers every scrape).
    const at = new Map<number, Map<string, number | null>>();
    for (const row of rows) at.set(row.t_s, (at.get(row.t_s) ?? new Map()).set(row.series, row.value));
    assert.ok(at.size >= 20, `${yTitle}: ${at.size} seconds`);
    let busy = 0;
    for (const [t, v] of at) {
      const parts = each.map((s) => v.get(s) ?? 0);
      assert.equal(v.get(sum), parts[0]! + parts[1]!, `${yTitle} at ${t} s`);
      if (parts[0]! > 0 && parts[1]! > 0) busy++;
    }
    // Both replicas work: neither series is a flat zero.
    if (noun === 'received' || noun === 'completed')
      assert.ok(busy > at.size / 2, `${yTitle}: both replicas in ${busy} s`);
  }
  // The figure's CSV names each row's panel by its label, so no two panels share one.
  const csv = readFileSync(join(out, 'figures/server.csv'), 'utf8');
  for (const [, noun] of panels) assert.match(csv, new RegExp(`^\\d+,"${noun}, replica 1",`, 'm'));
});
