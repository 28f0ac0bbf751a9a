import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { RUNTIME_PLUGINS } from '../cli/runtimes.js';
import { TABLE_BEGIN, TABLE_END, triggerTable } from './docs.js';
import { TRIGGER_KINDS } from './registry.js';

// docs/experiment-file.md's trigger table is the registry's and the runtimes' capabilities,
// rendered: a kind added with its one registry line appears there (UPDATE_DOCS=1 rewrites it).

const DOC = new URL('../../../docs/experiment-file.md', import.meta.url);

test("docs/experiment-file.md's trigger table is generated from the registry and the runtimes' capabilities", () => {
  const text = readFileSync(DOC, 'utf8');
  const begin = text.indexOf(TABLE_BEGIN);
  const end = text.indexOf(TABLE_END);
  assert.ok(begin >= 0 && end > begin, `docs/experiment-file.md: the markers ${TABLE_BEGIN} … ${TABLE_END}`);
  const want = `${TABLE_BEGIN}\n${triggerTable(RUNTIME_PLUGINS)}\n${TABLE_END}`;
  const have = text.slice(begin, end + TABLE_END.length);
  if (process.env.UPDATE_DOCS === '1' && have !== want) writeFileSync(DOC, text.replace(have, want));
  else assert.equal(have, want, 'run UPDATE_DOCS=1 node --test dist/orchestrator/trigger/docs.test.js');
  // One row per kind, the simulation's limits shown (it models no slow_close toxic and no LLM provider).
  for (const k of TRIGGER_KINDS) assert.match(want, new RegExp(`^\\| \`${k}\` \\|`, 'm'));
  assert.match(want, /^\| `slow-close` \|[^\n]*\| local, docker, swarm \|/m);
});
