import { BenchError } from '../../foundation/errors.js';
import type { Lab } from '../lab/Lab.js';
import { LinkClient, type LinkControl, type ToxicSpec } from '../lab/links.js';
import type { Trigger } from './Trigger.js';

function linksOf(lab: Lab, link: string): LinkControl {
  if (lab.linkControl) return lab.linkControl;
  if (!lab.faultProxyApi)
    throw new BenchError('E_LAB', `this lab has no fault proxy, so no link ${link} to act on`);
  return new LinkClient(lab.faultProxyApi);
}

/**
 * A toxic on one of the api's dependency links, through the Toxiproxy API (our fault
 * proxy locally, Toxiproxy in Docker). The toxic's name is unique per trigger, so two
 * overlapping triggers on one link each remove only their own.
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
    undoRecipe: (lab) => linksOf(lab, link).removeToxicRecipe(link, toxic.name),
    apply: async (lab) => {
      await linksOf(lab, link).addToxic(link, toxic);
    },
    undo: async (lab) => {
      const links = linksOf(lab, link);
      const present = await links.listToxics(link);
      if (present.some((t) => t.name === toxic.name)) await links.removeToxic(link, toxic.name);
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

/** The link is down (the proxy disabled): new connections are refused, open ones closed. */
export function partitionTrigger(link: string): Trigger {
  return {
    kind: 'partition',
    target: `link:${link}`,
    describe: () => `partition link ${link}`,
    undoRecipe: (lab) => linksOf(lab, link).enableRecipe(link),
    apply: async (lab) => {
      await linksOf(lab, link).disable(link);
    },
    undo: (lab) => linksOf(lab, link).enable(link),
  };
}
