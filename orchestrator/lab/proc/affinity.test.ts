import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowedCpus, cpusAllowedOf, formatCpuList, parseCpuList, splitCpus } from './affinity.js';

test('parseCpuList reads single CPUs and ranges, sorted and without duplicates', () => {
  assert.deepEqual(parseCpuList('0-1'), [0, 1]);
  assert.deepEqual(parseCpuList('6,0-3'), [0, 1, 2, 3, 6]);
  assert.deepEqual(parseCpuList('2,2,1-2\n'), [1, 2]);
  assert.deepEqual(parseCpuList(''), []);
});

test('parseCpuList refuses what is not a CPU list', () => {
  assert.throws(() => parseCpuList('0-a'), /not a CPU list: "0-a"/);
  assert.throws(() => parseCpuList('3-1'), /runs backwards/);
  assert.throws(() => parseCpuList('1,,2'), /not a CPU list/);
});

test('formatCpuList writes ranges the way taskset and /proc do, and parseCpuList reads it back', () => {
  assert.equal(formatCpuList([0, 1, 2, 3, 6]), '0-3,6');
  assert.equal(formatCpuList([5, 1, 3, 2]), '1-3,5');
  assert.equal(formatCpuList([7]), '7');
  for (const cpus of [[0], [0, 2, 4], [1, 2, 3, 8, 9, 11]])
    assert.deepEqual(parseCpuList(formatCpuList(cpus)), cpus);
});

test('cpusAllowedOf reads the Cpus_allowed_list line of a status text', () => {
  const status = 'Name:\tnode\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t1\n';
  assert.deepEqual(cpusAllowedOf(status), [0, 1]);
  assert.throws(() => cpusAllowedOf('Name:\tnode\n'), /no Cpus_allowed_list/);
});

test("allowedCpus reads this process's CPUs from /proc", () => {
  const cpus = allowedCpus();
  assert.ok(cpus.length >= 1);
  assert.deepEqual(allowedCpus(process.pid), cpus);
});

test('splitCpus: none below 2 CPUs; one for the generator up to 7; a quarter beyond; disjoint and complete', () => {
  assert.equal(splitCpus([]), undefined);
  assert.equal(splitCpus([3]), undefined);
  assert.deepEqual(splitCpus([0, 1]), { generator: [1], lab: [0] });
  assert.deepEqual(splitCpus([0, 1, 2, 3]), { generator: [3], lab: [0, 1, 2] });
  assert.deepEqual(splitCpus([0, 1, 2, 3, 4, 5, 6, 7]), { generator: [6, 7], lab: [0, 1, 2, 3, 4, 5] });
  // The CPUs the process is allowed, whatever their numbers (a cpuset of 2, 5, 9).
  assert.deepEqual(splitCpus([9, 2, 5]), { generator: [9], lab: [2, 5] });
  for (let n = 2; n <= 64; n++) {
    const all = Array.from({ length: n }, (_, i) => i * 2);
    const s = splitCpus(all)!;
    assert.ok(s.generator.length >= 1 && s.lab.length >= s.generator.length);
    assert.deepEqual(
      [...s.lab, ...s.generator].sort((a, b) => a - b),
      all,
    );
    assert.equal(s.generator.filter((c) => s.lab.includes(c)).length, 0);
  }
});
