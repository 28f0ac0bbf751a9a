import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import type { Runtime } from '../../orchestrator/lab/runtimes.js';
import { createTrigger } from '../../orchestrator/trigger/registry.js';
import type { Trigger } from '../../orchestrator/trigger/Trigger.js';
import type { ComposeOptions } from '../../orchestrator/lab/dockerData.js';
import { planOf } from './plan.js';
import { counter, Driver, type Capability } from './labConformance.js';

/**
 * The api link's conformance (issue 35): the clients' path to the api through the fault
 * proxy, in a lab of two replicas, driven by the triggers an experiment declares on
 * `link: api` and `link: api[1]`, with real requests from the run's own transport. What the
 * client sees includes the link's faults; what the api counts as received is its own.
 */

/** A toxic's latency: a request through it takes at least this long. */
const TOXIC_MS = 700;
/** A request on a healthy link is faster than this, even on a loaded machine. */
const FAST_MS = 250;

const YAML = `
name: api-link-conformance
lab: { api: { replicas: 2, workers: 4, work: { dist: constant, mean: 1ms } } }
load: { arrival: constant, rate: 1/s }
client: { timeout: 5s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 1s
  triggers:
    - { kind: latency, link: 'api[1]', latency: ${TOXIC_MS}ms, duration: 1s }
    - { kind: partition, link: api, duration: 1s }
    - { kind: loss, link: api, stream: upstream, probability: 100%, duration: 1s }
  observe: 1s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;

export interface ApiLinkCapabilities {
  /** scrapeText('api[i]') gives the replica's own received count. */
  readonly scrape: Capability;
  /**
   * Replica i's address as its link's proxy dials it, where it is not the one the lab
   * publishes (apiUrls[i]): the Docker lab's proxy dials the replica's service on the compose
   * network, the swarm lab's its container's address on the stack's network (read from the engine).
   */
  readonly upstream?: (i: number) => string | Promise<string>;
  /**
   * How long a request to a killed replica behind its link may wait for the proxy's reset
   * (default 2 s). The Docker lab's proxy dials the replica by its service name, which the
   * engine's DNS drops with the container: the reset comes once that lookup fails, as long as
   * the host's resolvers take (about 10 s on a machine with none reachable).
   */
  readonly killedResetMs?: number;
}

export interface ApiLinkOptions {
  /** Why the suite is skipped here (no engine, no images). */
  readonly skip?: string | undefined;
  /** The compose project of the docker runtime. */
  readonly docker?: ComposeOptions;
}

export function apiLinkConformance(
  runtime: Runtime,
  caps: ApiLinkCapabilities,
  o: ApiLinkOptions = {},
): void {
  registerRuntimes();
  describe(`api link conformance: ${runtime}`, { skip: o.skip ?? false }, () => {
    let d: Driver;
    const triggers: Trigger[] = planOf(YAML).experiment.schedule.triggers.map((t, i) => createTrigger(t, i));
    const [latency1, partition, loss] = triggers as [Trigger, Trigger, Trigger];
    after(async () => {
      await d?.close();
    });

    test('a trigger on link api puts the clients behind one fault-proxy link per replica (topology: client -> api)', async () => {
      d = new Driver(runtime, o.docker, YAML);
      await d.up();
      const links = (d.lab.topology().links ?? []).filter((l) => l.from === 'client');
      assert.deepEqual(
        links.map((l) => [l.to, l.proxy?.name]),
        [
          ['api', 'api-0'],
          ['api', 'api-1'],
        ],
      );
      for (const [i, l] of links.entries())
        assert.equal(
          l.proxy?.upstream,
          (await caps.upstream?.(i)) ?? d.lab.apiUrls[i]!.replace(/^http:\/\//, ''),
        );
      // A real lab's generator sends to the links' addresses, on loopback, none the api's own
      // (the simulation's transport routes by replica, with no address).
      if (runtime !== 'sim') {
        const via = d.lab.clientUrls ?? [];
        assert.deepEqual(
          via,
          links.map((l) => `http://${l.address}`),
        );
        for (const u of via) assert.match(u, /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.ok(!via.some((u) => d.lab.apiUrls.includes(u)), `clients: ${via.join(', ')}`);
      }
      for (const i of [0, 1]) assert.equal((await d.ask('/work', 5000, i)).kind, 'ok');
    });

    test(`latency ${TOXIC_MS} ms on link api[1]: replica 1's clients wait for it, replica 0's do not; the undo removes it`, async () => {
      await d.rt.settle(latency1.apply(d.lab));
      const slow = await d.ask('/work', 5000, 1);
      const fast = await d.ask('/work', 5000, 0);
      assert.equal(slow.kind, 'ok');
      assert.ok(slow.ms >= TOXIC_MS, `replica 1 through the toxic: ${slow.ms.toFixed(0)} ms`);
      assert.ok(fast.ms < FAST_MS, `replica 0, whose link has no toxic: ${fast.ms.toFixed(0)} ms`);
      await d.undo(latency1);
      assert.deepEqual(await d.rt.settle(d.links().listToxics('api-1')), []);
      const again = await d.ask('/work', 5000, 1);
      assert.ok(again.ms < FAST_MS, `replica 1 once the toxic is gone: ${again.ms.toFixed(0)} ms`);
    });

    test('partition of link api: every replica’s clients fail to connect; the undo brings the link back', async () => {
      await d.rt.settle(partition.apply(d.lab));
      for (const i of [0, 1]) {
        const down = await d.ask('/work', 2000, i);
        assert.ok(
          ['conn-refused', 'conn-reset', 'conn-error'].includes(down.kind),
          `replica ${i} behind a partitioned link: ${down.kind}`,
        );
      }
      await d.undo(partition);
      for (const i of [0, 1]) assert.equal((await d.askUntilOk('/work', 10_000, i)).kind, 'ok');
    });

    test('kill(api[0]) behind its link: the proxy accepts the client’s connection and closes it (conn-reset, not refused); start(api[0]): it answers again', async () => {
      await d.rt.settle(d.lab.kill('api[0]'));
      const down = await d.ask('/work', caps.killedResetMs ?? 2000, 0);
      assert.equal(down.kind, 'conn-reset', `replica 0 down behind its link: ${down.kind}`);
      await d.rt.settle(d.lab.start('api[0]'));
      assert.equal((await d.askUntilOk('/work', 10_000, 0)).kind, 'ok');
    });

    test(
      caps.scrape === true
        ? 'loss of every request on link api: the client times out and the api counts nothing received; the undo restores the path'
        : `loss of every request on link api: the client times out; the undo restores the path (no received count: ${caps.scrape})`,
      async () => {
        const before =
          caps.scrape === true
            ? counter(await d.lab.scrapeText('api[0]', 2000), 'api_requests_received_total')
            : 0;
        await d.rt.settle(loss.apply(d.lab));
        const lost = await d.ask('/work', 1500, 0);
        assert.equal(lost.kind, 'timeout', `a request through a link that loses every request: ${lost.kind}`);
        if (caps.scrape === true)
          assert.equal(
            counter(await d.lab.scrapeText('api[0]', 2000), 'api_requests_received_total'),
            before,
            'the api received nothing: its count is its own, not the client’s',
          );
        await d.undo(loss);
        assert.deepEqual(await d.rt.settle(d.links().listToxics('api-0')), []);
        assert.equal((await d.askUntilOk('/work', 10_000, 0)).kind, 'ok');
      },
    );
  });
}
