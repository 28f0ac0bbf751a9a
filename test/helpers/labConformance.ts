import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { cpus } from 'node:os';
import type { Attempt, OutcomeKind } from '../../bench/outcome.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { Clock } from '../../foundation/clock.js';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import type { ComposeOptions } from '../../orchestrator/lab/dockerData.js';
import type { Lab, UndoRecipe } from '../../orchestrator/lab/Lab.js';
import { LinkClient, type LinkControl } from '../../orchestrator/lab/links.js';
import { processTree } from '../../orchestrator/lab/proc/procUsage.js';
import { appliesTrigger, runtimePlugin, type RunRuntime } from '../../orchestrator/lab/RuntimePlugin.js';
import type { Runtime } from '../../orchestrator/lab/runtimes.js';
import { runUndo } from '../../orchestrator/trigger/journal.js';
import { triggerKind } from '../../orchestrator/trigger/registry.js';
import type { Trigger } from '../../orchestrator/trigger/Trigger.js';
import { tempDir } from './cli.js';
import { planOf } from './plan.js';
import { processState } from './procState.js';

/**
 * The Lab conformance suite (issue 18, point 6): the same checks, with real requests,
 * against every runtime's Lab as the run loop gets it (registerRuntimes(), then the
 * plugin's run(): the lab, its clock, its transport and `settle`, so the simulation is
 * driven in virtual time by the same code). What a runtime does not do by design is a
 * capability given as the reason: its test says so in its name and checks the design
 * instead (a recipe of kind `none`, a lab left up), or is skipped with the reason.
 */

/** `true`, or why the runtime does not by design. */
export type Capability = true | string;

export interface ConformanceCapabilities {
  /** processes() names a live host pid per running component. */
  readonly processes: Capability;
  /** scrapeText('api') returns the api's Prometheus metrics. */
  readonly scrape: Capability;
  /** pauseUndoRecipe / startUndoRecipe / a toxic's recipe / teardownRecipe do something when the journal's runner runs them. */
  readonly pauseUndo: Capability;
  readonly startUndo: Capability;
  readonly linkUndo: Capability;
  readonly teardown: Capability;
  /** down() stops every process of the lab. */
  readonly downStops: Capability;
}

export interface ConformanceOptions {
  readonly caps: ConformanceCapabilities;
  /** docker: the compose project (and offline env file). */
  readonly docker?: ComposeOptions;
  /** Why the whole suite cannot run here (no engine, no images): every test skips saying so. */
  readonly skip?: string | undefined;
}

/** The database's query delay: a cache miss takes at least this long, a hit far less. */
const QUERY_MS = 500;
/** A hit must be faster than this (the miss is at least QUERY_MS), even on a loaded machine. */
const HIT_MS = 250;
/** The redis link's latency toxic: a hit through it takes at least this long. */
const TOXIC_MS = 700;
const KEY = 7;

/** A small lab with a prewarmed cache in front of a database whose queries take QUERY_MS. */
const LAB_YAML = `
name: lab-conformance
lab:
  api: { workers: 4, work: { dist: constant, mean: 1ms } }
  cache: { ttl: 1h, prewarm: true }
  db: { keys: 50, pool: 4, query: { dist: constant, mean: ${QUERY_MS}ms } }
load: { arrival: constant, rate: 1/s, mix: [{ name: r, share: 100%, key: { dist: uniform, keys: 50 } }] }
client: { timeout: 5s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 1s, trigger: { kind: pause, target: api, duration: 1s }, observe: 1s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;

const PENDING: unique symbol = Symbol('pending');

export interface Answer {
  readonly kind: OutcomeKind;
  readonly status: number;
  /** On the runtime's clock (virtual in the simulation). */
  readonly ms: number;
}

/** One runtime's lab, its clock and transport, and requests over them. */
export class Driver {
  readonly rt: RunRuntime;
  private ready: { clock: Clock; transport: Transport } | undefined;
  private id = 0;

  constructor(runtime: Runtime, docker: ComposeOptions | undefined, yaml = LAB_YAML) {
    const plan = planOf(yaml);
    this.rt = runtimePlugin(runtime).run(plan, tempDir(`conformance-${runtime}`), {
      worstOriginMs: 60_000,
      ...(docker ? { docker } : {}),
    });
  }

  /** Brings the lab up, then makes the clock and the transport, as the run loop does (the api's address is known then). */
  async up(): Promise<void> {
    await this.lab.up();
    const clock = this.rt.clock();
    this.ready = { clock, transport: this.rt.transport(clock) };
  }

  get clock(): Clock {
    assert.ok(this.ready, 'the lab is up');
    return this.ready.clock;
  }

  get transport(): Transport {
    assert.ok(this.ready, 'the lab is up');
    return this.ready.transport;
  }

  async close(): Promise<void> {
    await this.lab.down();
    await this.ready?.transport.close();
  }

  get lab(): Lab {
    return this.rt.lab;
  }

  /** Sends one request (to api replica `replica`, when the lab runs several); it settles when answered, failed, or given up after `timeoutMs` (kind `timeout`). */
  send(path: string, timeoutMs = 5000, replica?: number): Promise<Answer> {
    const q = /[?&]key=(\d+)/.exec(path);
    const attempt: Attempt = {
      origin: {
        id: ++this.id,
        request: { cls: 0, method: 'GET', path, body: undefined, key: q ? Number(q[1]) : undefined },
        intendedMs: this.clock.now(),
        deadlineMs: Number.POSITIVE_INFINITY,
      },
      number: 1,
      ...(replica !== undefined ? { replica } : {}),
    };
    const ac = new AbortController();
    const t0 = this.clock.now();
    const cancel = this.clock.timer(t0 + timeoutMs, () => ac.abort());
    return this.transport.send(attempt, undefined, ac.signal).then((r) => {
      cancel();
      return { kind: r.kind, status: r.status, ms: this.clock.now() - t0 };
    });
  }

  /** Waits for `p` (in the simulation, by running its clock), at most `ms` on the runtime's clock. */
  within<T>(p: Promise<T>, ms: number): Promise<T | typeof PENDING> {
    const late = this.clock.sleepUntil(this.clock.now() + ms).then((): typeof PENDING => PENDING);
    return this.rt.settle(Promise.race([p, late]));
  }

  /** Several requests sent together, waited for. */
  settleAll(ps: Promise<Answer>[]): Promise<Answer[]> {
    return this.rt.settle(Promise.all(ps));
  }

  /** A trigger's undo as an interrupted run's would be: its journal recipe where the lab has one, else undo(). */
  async undo(t: Trigger): Promise<void> {
    const recipe = t.undoRecipe(this.lab);
    if (recipe.kind === 'none') await this.rt.settle(t.undo(this.lab));
    else runUndo(recipe);
  }

  /** A request, waited for. */
  ask(path: string, timeoutMs = 5000, replica?: number): Promise<Answer> {
    return this.rt.settle(this.send(path, timeoutMs, replica));
  }

  /** Asks until the api answers `path` with 200 (a restart through a recipe is not waited for by the lab). */
  async askUntilOk(path: string, forMs: number, replica?: number): Promise<Answer> {
    const end = this.clock.now() + forMs;
    for (;;) {
      const a = await this.ask(path, 2000, replica);
      if (a.kind === 'ok' || this.clock.now() >= end) return a;
      await this.rt.settle(this.clock.sleepUntil(this.clock.now() + 200));
    }
  }

  links(): LinkControl {
    if (this.lab.linkControl) return this.lab.linkControl;
    assert.ok(this.lab.faultProxyApi, 'a lab with a cache has its dependency links behind a fault proxy');
    return new LinkClient(this.lab.faultProxyApi);
  }
}

/** A counter of the api's /metrics text (its unlabelled sample). */
export function counter(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  assert.ok(m, `/metrics has ${name}`);
  return Number(m[1]);
}

/** Each host pid of the lab (Postgres's backends too), with the component it belongs to. */
function hostPids(lab: Lab): { component: string; pid: number }[] {
  return lab.processes().flatMap((p) =>
    (p.component === 'postgres' ? processTree(p.pid) : [p.pid]).map((pid) => ({
      component: p.component,
      pid,
    })),
  );
}

/** Gone, or a zombie its parent has yet to reap. */
export function gone(pid: number): boolean {
  const s = processState(pid);
  return s === null || s === 'Z' || s === 'X';
}

function stepsOf(u: UndoRecipe): UndoRecipe[] {
  return u.kind === 'steps' ? u.steps.flatMap(stepsOf) : [u];
}

/** The test's name: what it checks, or that the runtime does not by design and why. */
function named(what: string, cap: Capability, instead: string): string {
  return cap === true ? what : `${instead} (by design: ${cap})`;
}

export function labConformance(runtime: Runtime, o: ConformanceOptions): void {
  registerRuntimes();
  const { caps } = o;
  describe(`Lab conformance: ${runtime}`, { skip: o.skip ?? false }, () => {
    let d: Driver;
    after(async () => {
      await d?.close();
    });

    test('up(): every component starts and the api answers /health', async () => {
      d = new Driver(runtime, o.docker);
      await d.up();
      const a = await d.ask('/health');
      assert.deepEqual([a.kind, a.status], ['ok', 200]);
      assert.equal(d.lab.runtime, runtime);
      const names = d.lab.topology().components.map((c) => c.name);
      assert.deepEqual(names, ['api', 'redis', 'postgres']);
    });

    test(
      named(
        'processes(): a live host pid for the api, redis, postgres and the fault proxy',
        caps.processes,
        'processes(): none',
      ),
      () => {
        const ps = d.lab.processes();
        if (caps.processes !== true) return assert.deepEqual(ps, []);
        assert.deepEqual(ps.map((p) => p.component).sort(), ['api', 'faultproxy', 'postgres', 'redis']);
        for (const p of ps) assert.ok(!gone(p.pid), `${p.component}'s pid ${p.pid} is alive`);
      },
    );

    test(
      caps.scrape === true
        ? "scrapeText('api'): the api's metrics, counting the requests it received"
        : `scrapeText('api'): skipped, ${caps.scrape}`,
      { skip: caps.scrape === true ? false : caps.scrape },
      async () => {
        const before = counter(await d.lab.scrapeText('api', 2000), 'api_requests_received_total');
        assert.equal((await d.ask(`/work?key=${KEY}`)).kind, 'ok');
        const text = await d.lab.scrapeText('api', 2000);
        assert.equal(counter(text, 'api_requests_received_total'), before + 1);
      },
    );

    test('pause(api): a request does not complete while paused; resume(api): it completes', async () => {
      await d.lab.pause('api');
      const p = d.send('/health', 10_000);
      assert.equal(await d.within(p, 800), PENDING, 'no answer from a paused api');
      await d.lab.resume('api');
      const a = await d.within(p, 5000);
      assert.notEqual(a, PENDING, 'answered once resumed');
      assert.equal((a as Answer).kind, 'ok');
    });

    test(
      named(
        "pauseUndoRecipe(api), run by the fault journal's runner, resumes the api",
        caps.pauseUndo,
        'pauseUndoRecipe(api): none',
      ),
      async () => {
        await d.lab.pause('api');
        const undo = d.lab.pauseUndoRecipe('api');
        if (caps.pauseUndo !== true) {
          assert.equal(undo.kind, 'none');
          await d.lab.resume('api');
          return;
        }
        assert.notEqual(undo.kind, 'none');
        const p = d.send('/health', 10_000);
        assert.equal(await d.within(p, 800), PENDING, 'no answer from a paused api');
        runUndo(undo);
        const a = await d.within(p, 5000);
        assert.notEqual(a, PENDING, 'answered once the recipe ran');
        assert.equal((a as Answer).kind, 'ok');
        await d.lab.resume('api'); // the lab's own bookkeeping: a no-op on a running api
      },
    );

    for (const halt of ['kill', 'stop'] as const)
      test(`${halt}(api): a request fails without an answer; start(api): the api answers again`, async () => {
        await d.lab[halt]('api');
        const down = await d.ask('/health', 3000);
        assert.ok(
          ['conn-refused', 'conn-reset', 'conn-error'].includes(down.kind),
          `a ${halt}ed api: got ${down.kind} ${down.status}`,
        );
        await d.lab.start('api');
        const up = await d.ask('/health');
        assert.deepEqual([up.kind, up.status], ['ok', 200]);
      });

    test(
      named(
        "startUndoRecipe(api), run by the fault journal's runner, starts a killed api",
        caps.startUndo,
        'startUndoRecipe(api): none',
      ),
      async () => {
        if (caps.startUndo !== true) return assert.equal(d.lab.startUndoRecipe('api').kind, 'none');
        await d.lab.kill('api');
        const undo = d.lab.startUndoRecipe('api');
        assert.notEqual(undo.kind, 'none');
        assert.notEqual((await d.ask('/health', 3000)).kind, 'ok', 'the api is down');
        runUndo(undo);
        const a = await d.askUntilOk('/health', 60_000);
        assert.deepEqual([a.kind, a.status], ['ok', 200], 'the api answers once the recipe ran');
        await d.lab.start('api'); // the lab's own bookkeeping: a no-op on a running api
      },
    );

    test('flushCache(): a cached key becomes a miss (a database query), then is cached again', async () => {
      const hit = await d.ask(`/work?key=${KEY}`);
      assert.equal(hit.kind, 'ok');
      assert.ok(hit.ms < HIT_MS, `a prewarmed key is a hit: ${hit.ms.toFixed(0)} ms`);
      const misses =
        caps.scrape === true ? counter(await d.lab.scrapeText('api', 2000), 'api_cache_misses_total') : 0;
      await d.lab.flushCache();
      const miss = await d.ask(`/work?key=${KEY}`);
      assert.equal(miss.kind, 'ok');
      assert.ok(
        miss.ms >= QUERY_MS,
        `after the flush a miss waits for the database: ${miss.ms.toFixed(0)} ms`,
      );
      if (caps.scrape === true)
        assert.equal(counter(await d.lab.scrapeText('api', 2000), 'api_cache_misses_total'), misses + 1);
      const again = await d.ask(`/work?key=${KEY}`);
      assert.ok(again.ms < HIT_MS, `the miss filled the cache: ${again.ms.toFixed(0)} ms`);
    });

    test(
      caps.linkUndo === true
        ? "a latency toxic on the redis link slows a cache hit; its recipe, run by the fault journal's runner, removes it"
        : `a latency toxic on the redis link slows a cache hit; removeToxic undoes it (its recipe is none by design: ${caps.linkUndo})`,
      async () => {
        const links = d.links();
        const { toxic, undo } = await links.addToxic('redis', {
          name: 'conformance',
          type: 'latency',
          attributes: { latency: TOXIC_MS, jitter: 0 },
        });
        assert.equal(toxic.name, 'conformance');
        assert.deepEqual(
          (await links.listToxics('redis')).map((t) => t.name),
          ['conformance'],
        );
        const slow = await d.ask(`/work?key=${KEY}`);
        assert.equal(slow.kind, 'ok');
        assert.ok(slow.ms >= TOXIC_MS, `a hit through the toxic: ${slow.ms.toFixed(0)} ms`);
        if (caps.linkUndo === true) {
          // An HTTP request to the fault proxy: straight to its API, or (swarm, which publishes
          // none) through the engine to the stack's control container.
          assert.match(undo.kind, /^http(-forwarded)?$/);
          runUndo(undo);
        } else {
          assert.equal(undo.kind, 'none');
          await links.removeToxic('redis', 'conformance');
        }
        assert.deepEqual(await links.listToxics('redis'), []);
        const fast = await d.ask(`/work?key=${KEY}`);
        assert.ok(fast.ms < HIT_MS, `a hit once the toxic is gone: ${fast.ms.toFixed(0)} ms`);
      },
    );

    test('slowdown 400x: /work takes 400 times its 1 ms; the undo (the journal’s recipe where the lab has one) brings it back', async () => {
      const slowdown = triggerKind('slowdown').create(
        { kind: 'slowdown', target: 'api', factor: 400, duration: 1000 },
        'conformance',
      );
      await slowdown.apply(d.lab);
      const slow = await d.ask('/work');
      assert.equal(slow.kind, 'ok');
      assert.ok(slow.ms >= 390, `a request's work slowed 400x: ${slow.ms.toFixed(0)} ms`);
      await d.undo(slowdown);
      const fast = await d.ask('/work');
      assert.ok(fast.ms < HIT_MS, `its work once undone: ${fast.ms.toFixed(0)} ms`);
    });

    test('workers to 1: two requests at once are served one after the other; the undo gives the pool back', async () => {
      const slowdown = triggerKind('slowdown').create(
        { kind: 'slowdown', target: 'api', factor: 300, duration: 1000 },
        'conformance-slow',
      );
      const shrink = triggerKind('workers').create(
        { kind: 'workers', target: 'api', to: 1, duration: 1000 },
        'conformance-workers',
      );
      await slowdown.apply(d.lab);
      await shrink.apply(d.lab);
      const serial = await d.settleAll([d.send('/work'), d.send('/work')]);
      assert.deepEqual(
        serial.map((a) => a.kind),
        ['ok', 'ok'],
      );
      assert.ok(
        Math.max(...serial.map((a) => a.ms)) >= 580,
        `one worker: ${serial.map((a) => a.ms.toFixed(0))} ms`,
      );
      await d.undo(shrink);
      const parallel = await d.settleAll([d.send('/work'), d.send('/work')]);
      assert.ok(
        Math.max(...parallel.map((a) => a.ms)) < 580,
        `four workers again: ${parallel.map((a) => a.ms.toFixed(0))} ms`,
      );
      await d.undo(slowdown);
    });

    test(
      appliesTrigger(runtimePlugin(runtime), 'cpu-limit')
        ? 'cpu-limit 0.5 on redis: its process runs under a CFS quota of half a core and still answers; the journal’s recipe lifts it'
        : `cpu-limit: none (by design: the ${runtime} runtime declares no CPU quota)`,
      async () => {
        if (!appliesTrigger(runtimePlugin(runtime), 'cpu-limit')) {
          assert.equal(d.lab.limitCpu, undefined);
          return;
        }
        const limit = triggerKind('cpu-limit').create(
          { kind: 'cpu-limit', target: 'redis', cpus: 0.5, duration: 1000 },
          'conformance-cpu',
        );
        const undo = limit.undoRecipe(d.lab);
        await limit.apply(d.lab);
        const redis = d.lab.processes().find((p) => p.component === 'redis')!;
        assert.deepEqual(cfsQuota(redis.pid), { quotaUs: 50_000, periodUs: 100_000 });
        const hit = await d.ask(`/work?key=${KEY}`);
        assert.equal(hit.kind, 'ok');
        assert.notEqual(undo.kind, 'none');
        runUndo(undo);
        // No quota, or (Docker, which cannot reset one) a quota of every core, which limits nothing.
        const after = cfsQuota(redis.pid);
        assert.ok(
          after === null || after.quotaUs === -1 || after.quotaUs >= cpus().length * after.periodUs,
          `no limit once the recipe ran: ${JSON.stringify(after)}`,
        );
      },
    );

    test('a loss toxic (every message) on the redis link stalls a cache hit into the client’s timeout; removing it closes the stalled connection, and hits are fast again', async () => {
      const links = d.links();
      await links.addToxic('redis', {
        name: 'conformance-loss',
        type: 'loss',
        stream: 'upstream',
        attributes: { probability: 1 },
      });
      assert.deepEqual(
        (await links.listToxics('redis')).map((t) => [t.name, t.type, t.attributes['probability']]),
        [['conformance-loss', 'loss', 1]],
      );
      const lost = await d.ask(`/work?key=${KEY}`, 1500);
      assert.equal(lost.kind, 'timeout', `a hit through a link that loses every lookup: ${lost.kind}`);
      await links.removeToxic('redis', 'conformance-loss');
      assert.deepEqual(await links.listToxics('redis'), []);
      await d.askUntilOk(`/work?key=${KEY}`, 15_000);
      const fast = await d.ask(`/work?key=${KEY}`);
      assert.equal(fast.kind, 'ok');
      assert.ok(fast.ms < HIT_MS, `a hit once the toxic is gone: ${fast.ms.toFixed(0)} ms`);
    });

    test(
      named(
        'down(): no process of the lab is left; down() again does not throw',
        caps.downStops,
        'down(): the lab stays up; down() again does not throw',
      ),
      async () => {
        const pids = caps.processes === true ? hostPids(d.lab) : [];
        if (caps.processes === true) assert.ok(pids.length >= 4, `the lab's pids: ${JSON.stringify(pids)}`);
        await d.lab.down();
        if (caps.downStops === true) {
          const left = pids.filter((p) => !gone(p.pid));
          assert.deepEqual(left, [], 'every process of the lab is gone');
          if (caps.processes === true) assert.deepEqual(d.lab.processes(), []);
        } else {
          const a = await d.ask('/health');
          assert.deepEqual([a.kind, a.status], ['ok', 200], 'the lab was left up, nothing paused or stopped');
        }
        await d.lab.down();
      },
    );

    test(
      named(
        "teardownRecipe(), run by the fault journal's runner, leaves no process and no data directory",
        caps.teardown,
        'teardownRecipe(): none',
      ),
      async () => {
        if (caps.teardown !== true) return assert.equal(d.lab.teardownRecipe().kind, 'none');
        // A lab of its own: the recipe is what recovers after the orchestrator is killed.
        const e = new Driver(runtime, o.docker);
        try {
          await e.up();
          const pids = hostPids(e.lab);
          assert.ok(pids.length >= 4);
          const undo = e.lab.teardownRecipe();
          const dirs = stepsOf(undo).flatMap((s) => (s.kind === 'remove' ? [s.path] : []));
          assert.equal(dirs.length, 1, "the recipe removes Postgres's data directory");
          assert.ok(existsSync(dirs[0]!));
          runUndo(undo);
          // SIGKILL is sent; the kernel takes a moment to end a process (Postgres's backends).
          const end = Date.now() + 5000;
          while (pids.some((p) => !gone(p.pid)) && Date.now() < end)
            await new Promise((r) => setTimeout(r, 50));
          assert.deepEqual(
            pids.filter((p) => !gone(p.pid)),
            [],
            'every process of the lab is gone',
          );
          assert.equal(existsSync(dirs[0]!), false);
        } finally {
          await e.close();
        }
      },
    );
  });
}

/** The CFS quota of the cgroup v1 cpu controller `pid` is in (null where there is none to read). */
function cfsQuota(pid: number): { quotaUs: number; periodUs: number } | null {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('cpu'));
  if (!line) return null;
  const dir = `/sys/fs/cgroup/cpu${line.split(':')[2]}`;
  if (!existsSync(`${dir}/cpu.cfs_quota_us`)) return null;
  return {
    quotaUs: Number(readFileSync(`${dir}/cpu.cfs_quota_us`, 'utf8')),
    periodUs: Number(readFileSync(`${dir}/cpu.cfs_period_us`, 'utf8')),
  };
}
