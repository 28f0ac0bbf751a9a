import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskWatch, type TaskList } from './taskWatch.js';
import type { SwarmTask } from './tasks.js';

// Unasked task changes on successive task lists of a stack, as the engine reports them
// (the fields read): swarm replacing a task, a task failing, and what is not news.

const services = [
  { ID: 's-api', Spec: { Name: 'lab_api' } },
  { ID: 's-api1', Spec: { Name: 'lab_api1' } },
  { ID: 's-prom', Spec: { Name: 'lab_prometheus' } },
  { ID: 's-other', Spec: { Name: 'other_api' } },
];
const nodes = [{ ID: 'n1', Description: { Hostname: 'host-1' } }];
const task = (id: string, service: string, state: string, desired = 'running', err?: string): SwarmTask => ({
  ID: id,
  ServiceID: service,
  NodeID: 'n1',
  DesiredState: desired,
  Status: { State: state, Timestamp: `2026-12-02T10:00:00.${id.length}Z`, ...(err ? { Err: err } : {}) },
});
const list = (...tasks: SwarmTask[]): TaskList => ({ services, tasks, nodes });
const steady = [
  task('a0', 's-api', 'running'),
  task('a1', 's-api1', 'running'),
  task('p', 's-prom', 'running'),
];
const none = (): boolean => false;

test('task watch: the first list is the baseline; an unchanged stack is no news', () => {
  const w = new TaskWatch('lab');
  // An earlier run's task being shut down is not the lab's: no news when it goes.
  assert.deepEqual(w.step(list(...steady, task('old', 's-api', 'running', 'shutdown')), 0, none), []);
  assert.deepEqual(w.step(list(...steady, task('old', 's-api', 'shutdown', 'shutdown')), 2000, none), []);
  assert.deepEqual(w.step(list(...steady), 4000, none), []);
});

test('task watch: swarm replacing a task (a forced update) is the old task leaving running and a new one replacing it', () => {
  const w = new TaskWatch('lab');
  w.step(list(...steady), 0, none);
  // The update marks the old task shutdown while it still runs: not yet a change.
  const marking = [steady[0]!, steady[1]!, task('p', 's-prom', 'running', 'shutdown')];
  assert.deepEqual(w.step(list(...marking), 2000, none), []);
  const changes = w.step(
    list(
      steady[0]!,
      steady[1]!,
      task('p', 's-prom', 'shutdown', 'shutdown'),
      task('p2', 's-prom', 'starting'),
    ),
    4000,
    none,
  );
  assert.deepEqual(changes, [
    {
      e: 'swarm-task',
      change: 'left-running',
      service: 'prometheus',
      task: 'p',
      state: 'shutdown',
      desired: 'shutdown',
      node: 'host-1',
      engineAt: '2026-12-02T10:00:00.1Z',
      atMs: 4000,
      // (no replaces: that is the new task's)
    },
    {
      e: 'swarm-task',
      change: 'new',
      service: 'prometheus',
      task: 'p2',
      state: 'starting',
      desired: 'running',
      node: 'host-1',
      engineAt: '2026-12-02T10:00:00.2Z',
      atMs: 4000,
      replaces: 'p',
    },
  ]);
  // The new task is the lab's from now on: its failure is news too.
  assert.deepEqual(
    w.step(list(steady[0]!, steady[1]!, task('p2', 's-prom', 'running')), 6000, none).map((c) => c.change),
    [],
  );
  const failed = w.step(
    list(steady[0]!, steady[1]!, task('p2', 's-prom', 'failed', 'running', 'task: non-zero exit (137)')),
    8000,
    none,
  );
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.change, 'left-running');
  assert.equal(failed[0]!.error, 'task: non-zero exit (137)');
});

test('task watch: a task leaving running under a kill or stop of the run is the trigger’s, not news; under none it is', () => {
  const killed = [steady[0]!, task('a1', 's-api1', 'failed', 'running', 'exit 137'), steady[2]!];
  const ours = new TaskWatch('lab');
  ours.step(list(...steady), 0, none);
  assert.deepEqual(
    ours.step(list(...killed), 2000, (s) => s === 'api1'),
    [],
  );
  const unasked = new TaskWatch('lab');
  unasked.step(list(...steady), 0, none);
  // A trigger on another service does not cover this one.
  const c = unasked.step(list(...killed), 2000, (s) => s === 'api');
  assert.deepEqual(
    c.map((x) => [x.change, x.service, x.task, x.state, x.error]),
    [['left-running', 'api1', 'a1', 'failed', 'exit 137']],
  );
  // Reported once: it stays failed.
  assert.deepEqual(unasked.step(list(...killed), 4000, none), []);
});

test('task watch: a task the engine no longer lists has gone; other stacks’ tasks are not watched', () => {
  const w = new TaskWatch('lab');
  w.step(list(...steady, task('x', 's-other', 'running')), 0, none);
  const c = w.step(list(steady[0]!, steady[2]!, task('x2', 's-other', 'running')), 2000, none);
  assert.deepEqual(
    c.map((x) => [x.change, x.service, x.task, x.state]),
    [['left-running', 'api1', 'a1', 'gone']],
  );
});
