import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { jsonSchemaOf } from './jsonSchema.js';

// docs/experiment-file.md documents every field of an experiment file: a field added to
// the schema without a line there fails this test.

type Node = {
  properties?: Record<string, Node>;
  items?: Node;
  oneOf?: Node[];
  anyOf?: Node[];
  additionalProperties?: Node | boolean;
};

function fieldPaths(node: Node, path: string, out: Set<string>): void {
  for (const alt of [...(node.oneOf ?? []), ...(node.anyOf ?? [])]) fieldPaths(alt, path, out);
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    const p = path ? `${path}.${k}` : k;
    out.add(p);
    fieldPaths(v, p, out);
  }
  if (typeof node.additionalProperties === 'object')
    fieldPaths(node.additionalProperties, `${path}.<name>`, out);
  if (node.items) fieldPaths(node.items, `${path}[]`, out);
}

test('docs/experiment-file.md names every field of the experiment schema', () => {
  const doc = readFileSync(new URL('../../../docs/experiment-file.md', import.meta.url), 'utf8');
  const named = new Set([...doc.matchAll(/`([a-zA-Z0-9_.<>[\]]+)`/g)].map((m) => m[1]!));
  const paths = new Set<string>();
  fieldPaths(jsonSchemaOf('experiment') as Node, '', paths);
  const missing = [...paths].filter((p) => {
    // Trigger fields are documented once, under schedule.trigger.
    const q = p.replace(/^schedule\.triggers\[\]/, 'schedule.trigger');
    if (named.has(q) || named.has(`${q}[]`)) return false;
    // An object is documented by the fields under it.
    if ([...named].some((n) => n.startsWith(`${q}.`) || n.startsWith(`${q}[].`))) return false;
    // A distribution's dist/mean/sigma are documented with the field that holds it.
    const parent = q.slice(0, q.lastIndexOf('.'));
    if (/\.(dist|mean|sigma)$/.test(q) && named.has(parent)) return false;
    // A section heading documents its section; a trigger kind's fields are in the kind table.
    if (!q.includes('.')) return !doc.includes(`\`${q}\``);
    if (q.startsWith('schedule.trigger.')) return !doc.includes(`\`${q.split('.').pop()}\``);
    return true;
  });
  assert.deepEqual(missing, []);
});
