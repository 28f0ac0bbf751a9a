import type { ForwardedHttpUndo } from '../dockerData.js';
import type { LinkClient, LinkControl, ToxicSpec, ToxicState } from '../links.js';
import type { UndoRecipe } from '../undoRecipe.js';

/** Where a stack's fault proxy API is, seen from its control container, and how to reach that container. */
export type ForwardVia = Pick<ForwardedHttpUndo, 'host' | 'port' | 'container' | 'engine'>;

/**
 * The fault proxy's links on swarm: the docker lab's LinkClient, through the run's port-forward,
 * whose undo recipes go through the engine instead (ForwardedHttpUndo): the forward's local
 * address dies with the orchestrator, and `lab reset` must still reach the proxy after that.
 */
export class ForwardedLinks implements LinkControl {
  constructor(
    private readonly links: LinkClient,
    private readonly via: ForwardVia,
  ) {}

  listToxics(link: string): Promise<ToxicState[]> {
    return this.links.listToxics(link);
  }

  async addToxic(link: string, spec: ToxicSpec): Promise<{ toxic: ToxicState; undo: UndoRecipe }> {
    const { toxic, undo } = await this.links.addToxic(link, spec);
    return { toxic, undo: this.forwarded(undo) };
  }

  removeToxic(link: string, name: string): Promise<void> {
    return this.links.removeToxic(link, name);
  }

  async disable(link: string): Promise<UndoRecipe> {
    return this.forwarded(await this.links.disable(link));
  }

  enable(link: string): Promise<void> {
    return this.links.enable(link);
  }

  removeToxicRecipe(link: string, toxic: string): UndoRecipe {
    return this.forwarded(this.links.removeToxicRecipe(link, toxic));
  }

  enableRecipe(link: string): UndoRecipe {
    return this.forwarded(this.links.enableRecipe(link));
  }

  /** The HTTP recipe, its URL's path sent through the engine to the proxy's address on the stack's network. */
  private forwarded(r: UndoRecipe): UndoRecipe {
    if (r.kind !== 'http') return r;
    const u = new URL(r.url);
    return {
      kind: 'http-forwarded',
      method: r.method,
      path: `${u.pathname}${u.search}`,
      ...(r.body !== undefined ? { body: r.body } : {}),
      ...this.via,
      what: r.what,
    };
  }
}
