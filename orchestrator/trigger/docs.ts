import { z } from 'zod';
import { appliesTrigger, type RuntimePlugin } from '../lab/RuntimePlugin.js';
import type { TargetClass } from './kind.js';
import { triggerKinds } from './registry.js';

/**
 * The docs' table of trigger kinds, derived from the registry and the runtimes' declared
 * capabilities: docs/experiment-file.md holds it between its markers, and a test keeps it
 * equal to this (so a kind added with its one line shows up there, and nowhere by hand).
 */

export const TABLE_BEGIN = '<!-- trigger kinds: generated from orchestrator/trigger/registry.ts -->';
export const TABLE_END = '<!-- end of trigger kinds -->';

const ACTS_ON: { readonly [C in TargetClass]: string } = {
  process: "a component's process",
  capacity: "the api's capacity",
  cpu: "a component's CPU quota",
  link: "a link (the clients' to the api, the api's to a dependency)",
  load: 'the offered load',
  cache: "the cache's content",
  provider: 'the LLM provider',
  host: "the orchestrator's machine",
  interface: "a container's network interface",
};

/** Every field but those all kinds share (kind, duration, at), with its choices and default. */
function fields(schema: z.ZodType): string {
  const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
  return Object.entries(shape)
    .filter(([k]) => !['kind', 'duration', 'at'].includes(k))
    .map(([k, f]) => {
      const inner =
        f instanceof z.ZodDefault || f instanceof z.ZodOptional ? (f.def.innerType as z.ZodType) : f;
      const choices =
        inner instanceof z.ZodEnum ? ` (${inner.options.map((o) => `\`${o}\``).join(' \\| ')})` : '';
      const dflt =
        f instanceof z.ZodDefault
          ? `, default ${String(f.def.defaultValue)}`
          : f instanceof z.ZodOptional
            ? ', optional'
            : '';
      return `\`${k}\`${choices}${dflt}`;
    })
    .join('; ');
}

/** The markdown table: kind, its fields, what it acts on, the runtimes that apply it, what it does. */
export function triggerTable(runtimes: readonly RuntimePlugin[]): string {
  const rows = triggerKinds().map((d) => {
    const on = runtimes.filter((p) => appliesTrigger(p, d.kind)).map((p) => p.name);
    return `| \`${d.kind}\` | ${fields(d.schema) || '–'} | ${ACTS_ON[d.acts]} | ${on.join(', ') || 'none'} | ${d.summary} |`;
  });
  return ['| kind | fields | acts on | runtimes | what it does |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}
