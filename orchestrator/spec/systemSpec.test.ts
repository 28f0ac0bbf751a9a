import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BenchError } from '../../foundation/errors.js';
import { specIssues } from '../../test/helpers/specIssues.js';
import { apiReplicas } from '../run/client.js';
import { systemSeries } from '../scrape/scraper.js';
import { createTrigger } from '../trigger/registry.js';
import { builtinLab } from './builtinLab.js';
import { parseExperiment } from './load.js';
import { planCapacity, planRun } from './plan.js';
import { timeConstants } from './timeConstants.js';
import { validityLimits } from '../analysis/validity.js';
import { simRefusals } from '../../sim/refusals.js';
import { systemUrl } from './sections/system.js';
import { startOrder } from '../lab/local/SystemLab.js';

/** An experiment on your own system: `system` as its system section's lines, `trigger` its trigger. */
function yaml(
  system = 'url: http://127.0.0.1:18080/work',
  trigger = 'kind: command, apply: "touch x", undo: "rm -f x", duration: 2s',
  rate = '100/s',
): string {
  return `name: s
system: { ${system} }
load: { arrival: constant, rate: ${rate} }
client: { timeout: 1s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 2s
  trigger: { ${trigger} }
  observe: 2s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;
}

const LAB = `lab:
  api: { workers: 4, work: { dist: constant, mean: 10ms } }
`;

test('system: { url } parses; the built-in lab is absent, and the features that need it say so', () => {
  const e = parseExperiment(yaml(), 's.yaml');
  assert.equal(e.lab, undefined);
  assert.deepEqual(e.system, { url: 'http://127.0.0.1:18080/work' });
  assert.equal(apiReplicas(e), 1);
  assert.throws(
    () => builtinLab(e, 'the simulation'),
    (err: unknown) =>
      err instanceof BenchError &&
      /the simulation needs the built-in lab \(lab:\).*declares its own system/.test(err.message),
  );
  assert.equal(simRefusals(e)[0]!.path, 'system');
  // Only the client's and the analysis's time constants: the system declares none.
  assert.ok(timeConstants(e).every((c) => !c.from.startsWith('lab.')));
  // The lag limit cannot use a mean work it does not know: max(1 ms, 2% of the timeout).
  assert.equal(validityLimits(e).lagP99Ms, 20);
});

test('exactly one of lab: and system:, refused with the file and the line', () => {
  const neither = specIssues(yaml().replace(/^system:.*\n/m, ''), 'n.yaml');
  assert.equal(neither.length, 1);
  assert.equal(neither[0]!.file, 'n.yaml');
  assert.equal(neither[0]!.line, 1);
  assert.match(neither[0]!.message, /needs the system under test: lab: .* or system:/);
  const both = specIssues(yaml().replace(/^system:/m, `${LAB}system:`), 'b.yaml');
  assert.equal(both.length, 1);
  assert.equal(both[0]!.path, 'system');
  assert.equal(both[0]!.line, 4);
  assert.match(both[0]!.message, /either lab: .* or system: .*, not both/);
});

test('system fields: an http URL, a strict section, Prometheus series names in the mapping', () => {
  for (const [system, path] of [
    ['url: ftp://x/y', 'system.url'],
    ['url: not a url', 'system.url'],
    ['url: http://127.0.0.1:1/, health: https://127.0.0.1:1/h', 'system.health'],
    ['url: http://127.0.0.1:1/, port: 80', 'system.port'],
    [
      'url: http://127.0.0.1:1/, metrics: { url: http://127.0.0.1:1/metrics, received: "9bad" }',
      'system.metrics.received',
    ],
    [
      'url: http://127.0.0.1:1/, metrics: { url: http://127.0.0.1:1/metrics, recieved: x }',
      'system.metrics.recieved',
    ],
  ] as const) {
    const issues = specIssues(yaml(system), 'f.yaml');
    assert.equal(issues[0]!.path, path, system);
    assert.equal(issues[0]!.line, 2, system);
  }
});

test('triggers on a url system: load and command only; the others are refused by name and why', () => {
  parseExperiment(yaml(undefined, 'kind: load-spike, factor: 3x, duration: 2s'), 'ok.yaml');
  for (const [trigger, why] of [
    [
      'kind: pause, target: api, duration: 2s',
      /a pause trigger acts on a component's process, which metabench did not start/,
    ],
    [
      'kind: latency, link: redis, latency: 100ms, duration: 2s',
      /a latency trigger acts on a dependency link, on which metabench has no fault proxy/,
    ],
    [
      'kind: flush-cache, target: redis, duration: 2s',
      /flush-cache trigger flushes the built-in lab's cache/,
    ],
  ] as const) {
    const issues = specIssues(yaml(undefined, trigger), 't.yaml');
    assert.equal(issues.length, 1, trigger);
    assert.equal(issues[0]!.path, 'schedule.trigger.kind');
    assert.equal(issues[0]!.line, 8);
    assert.match(issues[0]!.message, why);
    assert.match(issues[0]!.message, /load triggers \(load-spike\) and commands \(kind: command/);
  }
});

test('command trigger: apply and undo are required, non-empty; its undo is journaled as a shell recipe', () => {
  const e = parseExperiment(yaml(), 'c.yaml');
  const t = createTrigger(e.schedule.triggers[0]!);
  assert.equal(t.kind, 'command');
  assert.equal(t.target, 'command');
  assert.deepEqual(t.undoRecipe(undefined as never), {
    kind: 'shell',
    command: 'rm -f x',
    cwd: process.cwd(),
    what: 'command `touch x`',
  });
  const missing = specIssues(yaml(undefined, 'kind: command, apply: "x", duration: 2s'), 'm.yaml');
  assert.equal(missing[0]!.path, 'schedule.trigger.undo');
  const empty = specIssues(yaml(undefined, 'kind: command, apply: "  ", undo: "y", duration: 2s'), 'e.yaml');
  assert.equal(empty[0]!.path, 'schedule.trigger.apply');
  assert.match(empty[0]!.message, /give a shell command/);
  // On the built-in lab too (the local runtime applies what acts on this machine).
  parseExperiment(yaml().replace(/^system:.*\n/m, LAB), 'lab.yaml');
});

test('% capacity on a system needs a calibration; absolute rates always plan', () => {
  const abs = parseExperiment(yaml(), 'a.yaml');
  const c = planCapacity(abs, null);
  assert.equal(c.usedPerS, null);
  assert.equal(c.nominalPerS, null);
  assert.equal(c.source, 'unknown');
  assert.equal(planRun(abs, { scale: 1, run: 1 }).ratePerS, 100);
  const pct = parseExperiment(yaml(undefined, undefined, '70% capacity'), 'p.yaml');
  assert.throws(
    () => planRun(pct, { scale: 1, run: 1 }),
    (err: unknown) =>
      err instanceof BenchError &&
      /% capacity needs the system's capacity/.test(err.message) &&
      /calibrate/.test(err.hint ?? ''),
  );
  const measured = {
    perS: 200,
    file: 'cal.json',
    measuredAt: '2026-01-01T00:00:00Z',
    resultsDir: 'r',
    machine: 'm',
  };
  const p = planRun(pct, { scale: 1, run: 1, capacity: measured });
  assert.equal(p.capacity.usedPerS, 200);
  assert.equal(p.ratePerS, 140);
});

test('a metrics mapping names the series of each column; the unmapped stay unmapped', () => {
  const e = parseExperiment(
    yaml(
      'url: http://127.0.0.1:1/w, metrics: { url: http://127.0.0.1:1/metrics, received: front_received_total, queue: \'front_queue{pool="main"}\' }',
    ),
    'm.yaml',
  );
  assert.deepEqual(systemSeries(e.system!.metrics!), {
    received: 'front_received_total',
    completed: undefined,
    queueDepth: 'front_queue{pool="main"}',
    busyWorkers: undefined,
  });
});

/** A system of two processes, front depending on back through BACK_ADDR. */
const PROCESSES = `system:
  processes:
    - { name: back, command: node back.js, env: { BACK_DELAY_MS: "5" }, port: 18091, health: /health }
    - { name: front, command: node front.js, port: 18090, health: /health }
  entry: front
  path: /work
  links: [{ from: front, to: back, env: BACK_ADDR }]
`;

function processes(trigger: string, system = PROCESSES): string {
  return yaml(undefined, trigger).replace(/^system:.*\n/m, system);
}

test('system: { processes }: the entry and path make the url; process and link triggers name what it declares', () => {
  const e = parseExperiment(processes('kind: pause, target: front, duration: 2s'), 'p.yaml');
  assert.equal(systemUrl(e.system!), 'http://127.0.0.1:18090/work');
  assert.deepEqual(startOrder(e.system!), ['back', 'front']);
  parseExperiment(processes('kind: latency, link: back, latency: 100ms, duration: 2s'), 'l.yaml');
  parseExperiment(processes('kind: kill, target: back, duration: 2s'), 'k.yaml');
  for (const [trigger, path, why] of [
    [
      'kind: pause, target: api, duration: 2s',
      'schedule.trigger.target',
      /no component "api" in system.processes \(declared: back, front\)/,
    ],
    ['kind: pause, target: fornt, duration: 2s', 'schedule.trigger.target', /did you mean "front"\?/],
    [
      "kind: pause, target: 'front[1]', duration: 2s",
      'schedule.trigger.target',
      /have no replicas; write target: front/,
    ],
    [
      'kind: latency, link: redis, latency: 100ms, duration: 2s',
      'schedule.trigger.link',
      /no link "redis" in system.links \(declared: back\)/,
    ],
    [
      'kind: flush-cache, duration: 2s',
      'schedule.trigger.kind',
      /flushes the built-in lab's cache: your own system takes process triggers/,
    ],
  ] as const) {
    const issues = specIssues(processes(trigger), 't.yaml');
    assert.equal(issues.length, 1, trigger);
    assert.equal(issues[0]!.path, path, trigger);
    assert.match(issues[0]!.message, why);
  }
});

test('the built-in lab keeps its own words for a target or a link it does not have', () => {
  const lab = (trigger: string) => processes(trigger, LAB);
  const t = specIssues(lab('kind: pause, target: front, duration: 2s'), 'l.yaml');
  assert.equal(t[0]!.path, 'schedule.trigger.target');
  assert.match(t[0]!.message, /"front" is not a target: use one of api, redis, postgres, llm/);
  const l = specIssues(lab('kind: latency, link: redsi, latency: 1ms, duration: 2s'), 'l.yaml');
  assert.equal(l[0]!.path, 'schedule.trigger.link');
  assert.match(
    l[0]!.message,
    /"redsi" is not a link of the lab: use one of api, redis, postgres, llm \(did you mean "redis"\?\)/,
  );
});

test('system.processes: names, ports, the entry and the links are checked against each other', () => {
  const cases: [string, string, RegExp][] = [
    [
      PROCESSES.replace('entry: front', 'entry: api'),
      'system.entry',
      /no process "api" in system.processes \(declared: back, front\)/,
    ],
    [PROCESSES.replace('  entry: front\n', ''), 'system.entry', /name the component the load goes to/],
    [PROCESSES.replace('port: 18090', 'port: 18091'), 'system.processes.1.port', /port 18091 is also back's/],
    [
      PROCESSES.replace('name: front', 'name: back')
        .replace('entry: front', 'entry: back')
        .replace('from: front', 'from: back'),
      'system.processes.1.name',
      /"back" is used twice/,
    ],
    [PROCESSES.replace('to: back', 'to: db'), 'system.links.0.to', /no process "db"/],
    [
      PROCESSES.replace(
        '[{ from: front, to: back, env: BACK_ADDR }]',
        '[{ from: front, to: back, env: A }, { from: back, to: front, env: B }]',
      ),
      'system.links',
      /a cycle \(front -> back -> front\)/,
    ],
    [PROCESSES.replace('env: BACK_ADDR', 'env: 1BAD'), 'system.links.0.env', /an environment variable name/],
    [
      PROCESSES.replace('  path: /work\n', '  path: /work\n  url: http://127.0.0.1:1/\n'),
      'system.processes',
      /either url .* or processes .*, not both/,
    ],
  ];
  for (const [system, path, why] of cases) {
    const issues = specIssues(processes('kind: load-spike, factor: 2x, duration: 2s', system), 'p.yaml');
    assert.equal(issues[0]!.path, path, system);
    assert.match(issues[0]!.message, why);
  }
});
