import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The state folder (fault journal, stored calibrations) of tests: a fresh temporary one,
 * never the user's ($METABENCH_STATE_DIR, $XDG_STATE_HOME/metabench or
 * ~/.local/state/metabench), so a capacity stored by `metabench calibrate` on this
 * machine can never change a test's plan, and a test's journal never touches theirs.
 */
export function freshStateDir(): string {
  return mkdtempSync(join(tmpdir(), 'metabench-state-'));
}

/**
 * Importing this module points this test process's state folder at a fresh temporary
 * one (for runs made in-process: runExperiment, runSweep, capacityFor). The CLI's child
 * processes get one of their own per command (test/helpers/cli.ts).
 */
export const TEST_STATE_DIR = freshStateDir();
process.env.METABENCH_STATE_DIR = TEST_STATE_DIR;
