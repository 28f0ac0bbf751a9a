import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import { ToxicStub, type LinkEnv } from '../../services/faultproxy/stub.js';
import { noop } from '../../services/faultproxy/toxics/noop.js';
import { isStateful, type ToxicKind, type ToxicWrapper } from '../../services/faultproxy/toxics/Toxic.js';

export interface Delivered {
  atMs: number;
  data: string;
}

/**
 * One toxic on one stub, in virtual time, with no sockets: chunks are pushed in at
 * chosen times and what comes out is recorded with the time it came out.
 */
export function toxicHarness(
  kind: ToxicKind,
  attributes: Record<string, number>,
  opts: { toxicity?: number; seed?: number; clock?: VirtualClock } = {},
) {
  const clock = opts.clock ?? new VirtualClock();
  const out: Delivered[] = [];
  let endedAtMs: number | undefined;
  let reset = false;
  const env: LinkEnv = {
    clock,
    rng: seededRng(opts.seed ?? 1, 'harness'),
    queued: () => {},
    resetOnClose: () => {
      reset = true;
    },
  };
  const stub = new ToxicStub(env, {
    push: (c) => out.push({ atMs: clock.now(), data: c.data.toString() }),
    end: () => {
      endedAtMs = clock.now();
    },
  });
  const attrs = { ...kind.defaults(), ...attributes };
  const toxic = kind.create(attrs);
  const wrapper: ToxicWrapper = {
    name: 't',
    type: 't',
    stream: 'downstream',
    toxicity: opts.toxicity ?? 1,
    direction: 'downstream',
    attributes: attrs,
    toxic,
    index: 1,
  };
  if (isStateful(toxic)) stub.state = toxic.newState();
  stub.run(wrapper, noop);
  return {
    clock,
    stub,
    out,
    wrapper,
    get endedAtMs() {
      return endedAtMs;
    },
    get reset() {
      return reset;
    },
    /** Pushes `data` at virtual time `atMs` (advancing the clock there first). */
    async send(data: string, atMs = clock.now()): Promise<void> {
      await clock.advanceTo(atMs);
      stub.push({ data: Buffer.from(data), timestampMs: clock.now() });
    },
    async end(atMs = clock.now()): Promise<void> {
      await clock.advanceTo(atMs);
      stub.end();
    },
    /** Interrupts the toxic at `atMs`, then runs it again (what an update does). */
    async rerun(atMs = clock.now()): Promise<boolean> {
      await clock.advanceTo(atMs);
      const ok = await stub.interrupt();
      if (ok) stub.run(wrapper, noop);
      return ok;
    },
  };
}
