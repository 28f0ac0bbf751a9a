import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cgroupDirOf, cpuCgroups, limitCpu, quotaDir, unlimitCpu, unlimitRecipe } from './cpuQuota.js';

// A real CPU quota on a real process (this machine's cgroups: v1 here, as root).

const ticks = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, clock ticks
};

async function coresUsed(pid: number, ms: number): Promise<number> {
  const t0 = ticks(pid);
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return (ticks(pid) - t0) / 100 / ((performance.now() - w0) / 1000);
}

const c = cpuCgroups();
const skip = 'refused' in c ? c.refused : false;

test(
  'cpu-limit on the local runtime: a spinning process held to 0.2 cores, and no quota once undone; the journal recipe undoes it too',
  { skip },
  async () => {
    if ('refused' in c) return;
    const spin = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
    try {
      const pid = spin.pid!;
      await new Promise((r) => setTimeout(r, 300));
      const back = cgroupDirOf(c, pid);
      const dir = quotaDir(c, 'spin', pid);
      limitCpu(c, dir, [pid], 0.2);
      assert.equal(cgroupDirOf(c, pid), dir);
      const limited = await coresUsed(pid, 1500);
      assert.ok(limited < 0.35, `held to 0.2 cores: ${limited.toFixed(2)}`);
      unlimitCpu(c, dir, back);
      assert.equal(existsSync(dir), false, 'the cgroup is removed');
      assert.equal(cgroupDirOf(c, pid), back, 'the process is back where it was');
      // Where it is back, no quota holds it (its share of the cores is the machine's load's to decide).
      if (c.version === 1) assert.equal(readFileSync(`${back}/cpu.cfs_quota_us`, 'utf8').trim(), '-1');
      // The recipe (a shell command, for after a crash) does the same.
      // Journaled before the quota is set, as a trigger's undo is.
      const recipe = unlimitRecipe(c, dir, [pid], 'lift the quota');
      limitCpu(c, dir, [pid], 0.2);
      assert.equal(recipe.kind, 'shell');
      if (recipe.kind !== 'shell') return;
      assert.equal(spawnSync('sh', ['-c', recipe.command]).status, 0);
      assert.equal(existsSync(dir), false);
      assert.equal(cgroupDirOf(c, pid), back);
    } finally {
      spin.kill('SIGKILL');
    }
  },
);
