#!/usr/bin/env node
// Vendors the part of a Kubernetes release's published OpenAPI (v2) document that the kinds
// `metabench lab manifests --kubernetes` emits need, for the unit test that validates them
// (orchestrator/lab/kubernetes/manifests.test.ts):
//   node scripts/vendor-kubernetes-schema.mjs SWAGGER_JSON RELEASE SOURCE > test/fixtures/kubernetes/definitions.json
// SWAGGER_JSON is api/openapi-spec/swagger.json of the release (the Kubernetes clients
// regenerate from the same file); RELEASE names it (v1.36) and SOURCE says where it came
// from. Kept: every definition reachable from the kinds below, as published, less the
// descriptions (prose, most of the bytes). Nothing is loosened or tightened here: the test
// does that, and says so.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The kinds the generator emits (orchestrator/lab/kubernetes/manifests.ts), by definition name. */
const KINDS = [
  'io.k8s.api.apps.v1.Deployment',
  'io.k8s.api.core.v1.Service',
  'io.k8s.api.core.v1.Secret',
  'io.k8s.api.core.v1.ConfigMap',
  'io.k8s.api.networking.v1.NetworkPolicy',
];

const [file, release, source] = process.argv.slice(2);
if (!file || !release || !source) {
  process.stderr.write('usage: vendor-kubernetes-schema.mjs SWAGGER_JSON RELEASE SOURCE\n');
  process.exit(2);
}
const text = readFileSync(file, 'utf8');
const all = JSON.parse(text).definitions;

const strip = (v) => {
  if (Array.isArray(v)) return v.map(strip);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) if (k !== 'description') out[k] = strip(x);
  return out;
};
const refs = (v, into) => {
  if (Array.isArray(v)) for (const x of v) refs(x, into);
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v))
      if (k === '$ref' && typeof x === 'string') into.push(x.replace('#/definitions/', ''));
      else refs(x, into);
};

const kept = {};
const todo = [...KINDS];
while (todo.length > 0) {
  const name = todo.pop();
  if (kept[name]) continue;
  if (!all[name]) throw new Error(`${file}: no definition ${name}`);
  kept[name] = strip(all[name]);
  refs(kept[name], todo);
}
const sorted = Object.fromEntries(
  Object.keys(kept)
    .sort()
    .map((k) => [k, kept[k]]),
);
process.stdout.write(
  `${JSON.stringify(
    {
      release,
      source,
      sha256: createHash('sha256').update(text).digest('hex'),
      license: 'Apache-2.0, The Kubernetes Authors',
      kinds: KINDS,
      definitions: sorted,
    },
    null,
    1,
  )}\n`,
);
