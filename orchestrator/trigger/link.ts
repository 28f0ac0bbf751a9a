import { BenchError } from '../../foundation/errors.js';
import { parseApiLink, proxiesOfLink } from '../lab/apiLink.js';
import type { Lab, UndoRecipe } from '../lab/Lab.js';
import { LinkClient, type LinkControl, type ToxicSpec } from '../lab/links.js';
import type { Trigger } from './Trigger.js';

function linksOf(lab: Lab, link: string): LinkControl {
  if (lab.linkControl) return lab.linkControl;
  if (!lab.faultProxyApi)
    throw new BenchError('E_LAB', `this lab has no fault proxy, so no link ${link} to act on`);
  return new LinkClient(lab.faultProxyApi);
}

/**
 * The fault proxy's links a trigger on `link` acts on: the link itself, or, for the api
 * link, each replica's (lab/apiLink.ts). An E_LAB error for a replica the lab does not run.
 */
function proxiesOf(lab: Lab, link: string): string[] {
  if (!parseApiLink(link)) return [link];
  try {
    return proxiesOfLink(link, lab.apiUrls.length);
  } catch (err) {
    throw new BenchError('E_LAB', (err as Error).message);
  }
}

/** One recipe per proxy, as one step when there is one; `none` when none of them has anything to do (the simulation). */
function each(what: string, proxies: readonly string[], recipe: (proxy: string) => UndoRecipe): UndoRecipe {
  const steps = proxies.map(recipe);
  if (steps.length === 1) return steps[0]!;
  return steps.every((s) => s.kind === 'none') ? { kind: 'none', what } : { kind: 'steps', steps, what };
}

/**
 * A toxic on a link, through the Toxiproxy API (our fault proxy locally, Toxiproxy in
 * Docker): one of the api's dependency links, or the clients' link to the api (every
 * replica's for `api`). The toxic's name is unique per trigger, so two overlapping triggers
 * on one link each remove only their own.
 */
export function toxicTrigger(kind: string, link: string, toxic: ToxicSpec & { name: string }): Trigger {
  const what = `${kind} on link ${link} (${toxic.stream ?? 'downstream'}${
    Object.keys(toxic.attributes).length > 0
      ? `, ${Object.entries(toxic.attributes)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`
      : ''
  }${toxic.toxicity !== undefined && toxic.toxicity < 1 ? `, toxicity ${toxic.toxicity}` : ''})`;
  return {
    kind,
    target: `link:${link}`,
    describe: () => what,
    undoRecipe: (lab) =>
      each(`remove toxic ${toxic.name} from link ${link}`, proxiesOf(lab, link), (p) =>
        linksOf(lab, link).removeToxicRecipe(p, toxic.name),
      ),
    apply: async (lab) => {
      const links = linksOf(lab, link);
      for (const p of proxiesOf(lab, link)) await links.addToxic(p, toxic);
    },
    undo: async (lab) => {
      const links = linksOf(lab, link);
      for (const p of proxiesOf(lab, link)) {
        const present = await links.listToxics(p);
        if (present.some((t) => t.name === toxic.name)) await links.removeToxic(p, toxic.name);
      }
    },
  };
}

const ms = (x: number): number => Math.round(x);

/** A toxic of Toxiproxy `type` on the entry's link, with its stream and toxicity. */
export function onLinkTrigger(
  t: { kind: string; link: string; stream: 'downstream' | 'upstream'; toxicity: number },
  name: string,
  type: ToxicSpec['type'],
  attributes: Record<string, number>,
): Trigger {
  const rounded = Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, ms(v)]));
  return toxicTrigger(t.kind, t.link, {
    name,
    type,
    stream: t.stream,
    toxicity: t.toxicity,
    attributes: rounded,
  });
}

/** The link is down (its proxies disabled): new connections are refused, open ones closed. */
export function partitionTrigger(link: string): Trigger {
  return {
    kind: 'partition',
    target: `link:${link}`,
    describe: () => `partition link ${link}`,
    undoRecipe: (lab) =>
      each(`re-enable link ${link}`, proxiesOf(lab, link), (p) => linksOf(lab, link).enableRecipe(p)),
    apply: async (lab) => {
      const links = linksOf(lab, link);
      for (const p of proxiesOf(lab, link)) await links.disable(p);
    },
    undo: async (lab) => {
      const links = linksOf(lab, link);
      for (const p of proxiesOf(lab, link)) await links.enable(p);
    },
  };
}
