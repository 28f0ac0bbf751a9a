import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * Validates Kubernetes objects against the OpenAPI definitions of a release, vendored in
 * test/fixtures/kubernetes/definitions.json (its README says from where and how). Two
 * changes to the published definitions, each what the API server does:
 * - strict: an object's fields are those its definition lists (additionalProperties false,
 *   unless it says x-kubernetes-preserve-unknown-fields), as `kubectl apply` with its
 *   default --validate=strict refuses an unknown or misspelt field;
 * - int-or-string (a Service's targetPort, say) takes an integer or a string, which the
 *   v2 document writes as `type: string, format: int-or-string`.
 * Formats (int32, byte, quantity…) are not checked.
 */

type Schema = Record<string, unknown>;

export interface KubernetesSchema {
  readonly release: string;
  /** What is wrong with `o` ("" when nothing): each problem as `Kind/name path: message`. */
  problems(o: unknown): string[];
}

const FIXTURE = new URL('../../../test/fixtures/kubernetes/definitions.json', import.meta.url);

function strict(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strict);
  if (v === null || typeof v !== 'object') return v;
  const s = v as Schema;
  if (s.format === 'int-or-string') return { anyOf: [{ type: 'string' }, { type: 'integer' }] };
  const out: Schema = {};
  for (const [k, x] of Object.entries(s))
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(x as Schema).map(([p, d]) => [p, strict(d)]))
        : strict(x);
  if (
    s.properties !== undefined &&
    s.additionalProperties === undefined &&
    !s['x-kubernetes-preserve-unknown-fields']
  )
    out.additionalProperties = false;
  return out;
}

export function loadKubernetesSchema(file: URL = FIXTURE): KubernetesSchema {
  const vendored = JSON.parse(readFileSync(file, 'utf8')) as {
    release: string;
    kinds: string[];
    definitions: Record<string, Schema>;
  };
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ definitions: strict(vendored.definitions) }, 'k8s');
  const byKind = new Map<string, { gvk: string; validate: ValidateFunction }>();
  for (const name of vendored.kinds) {
    const gvk = (
      vendored.definitions[name]?.['x-kubernetes-group-version-kind'] as
        { group: string; version: string; kind: string }[] | undefined
    )?.[0];
    if (!gvk) throw new Error(`${file.pathname}: ${name} has no group-version-kind`);
    byKind.set(gvk.kind, {
      gvk: gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`,
      validate: ajv.compile({ $ref: `k8s#/definitions/${name}` }),
    });
  }
  return {
    release: vendored.release,
    problems(o: unknown): string[] {
      const x = o as { kind?: unknown; apiVersion?: unknown; metadata?: { name?: unknown } };
      const what = `${String(x?.kind)}/${String(x?.metadata?.name)}`;
      const kind = byKind.get(String(x?.kind));
      if (!kind) return [`${what}: kind ${String(x?.kind)} is not among the vendored kinds`];
      const out: string[] = [];
      if (x.apiVersion !== kind.gvk)
        out.push(`${what} /apiVersion: ${String(x.apiVersion)}, not ${kind.gvk}`);
      if (!kind.validate(o)) out.push(...(kind.validate.errors ?? []).map((e) => `${what} ${describe(e)}`));
      return out;
    },
  };
}

function describe(e: ErrorObject): string {
  const extra = e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : '';
  return `${e.instancePath || '/'}: ${e.message ?? e.keyword}${extra}`;
}
