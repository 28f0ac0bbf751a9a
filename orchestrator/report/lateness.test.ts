import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareReplays, type ReplayFigures } from '../analysis/lateness.js';
import type { RunData } from './load.js';
import { latenessLines } from './lateness.js';
import { runWarnings } from './warnings.js';
import { summary } from '../../test/helpers/reportData.js';

const intended: ReplayFigures = {
  outcome: 'recovered',
  failed: [],
  afterTriggerS: 36,
  offeredPerS: 278,
  goodputPerS: 280.861,
  amplification: 1,
  recoveryTimeS: 0,
};
const actual: ReplayFigures = {
  ...intended,
  outcome: 'metastable',
  goodputPerS: 5.722,
  amplification: 3.976,
  recoveryTimeS: null,
};

test('the report shows both replays of each replayed run, intended against actual, and what lateness changed', () => {
  const replay = {
    ...compareReplays(intended, actual, { recoveryWindowS: 1 }),
    recoveryWindowS: 1,
    tookS: 5.23,
  };
  const lines = latenessLines([
    { index: 1, replay } as unknown as RunData,
    { index: 2, replay: null } as unknown as RunData,
  ]);
  const table = lines.filter((l) => l.startsWith('| 1 |'));
  assert.deepEqual(table[0], '| 1 | intended | recovered | 280.861/s | 1 | 0 s |  |');
  assert.match(
    table[1]!,
    /^\| 1 \| actual \| metastable \| 5\.722\/s \| 3\.976 \| – \| \*\*changed\*\*: outcome metastable with the actual send times, recovered with the intended; goodput after the trigger/,
  );
  assert.equal(lines.filter((l) => l.startsWith('| 2 |')).length, 0);
  assert.ok(lines.includes('The replays took 5.2 s (two simulations a run).'));
  assert.deepEqual(latenessLines([{ index: 1, replay: null } as unknown as RunData]), []);
});

test('a run whose replay judged its lateness harmless gets no "could not keep the schedule" warning for lag past the fixed limit', () => {
  const late = summary({
    offered: 1000,
    recorded: 1000,
    lateSends: 46,
    scheduleLagMs: { ...summary().scheduleLagMs, p99: 13.1 },
  });
  assert.match(runWarnings(late).join(), /schedule lag p99 13\.1 ms above its limit of 10 ms/);
  const replayed = {
    ...late,
    validity: {
      ...late.validity,
      checks: late.validity.checks.map((c) =>
        c.check === 'lag'
          ? {
              ...c,
              value: 'replay with the actual send times: …: lateness harmless',
              limit: 'the same outcome class and figures within their noise',
              ok: true,
            }
          : c,
      ),
    },
  };
  assert.deepEqual(runWarnings(replayed), []);
});
