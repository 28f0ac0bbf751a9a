import { readFileSync } from 'node:fs';

/** The process's state letter (R, S, T for stopped, Z…) from /proc/PID/stat; null when it does not exist. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}
