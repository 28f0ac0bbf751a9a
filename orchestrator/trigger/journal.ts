import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { UndoRecipe } from '../lab/Lab.js';
import { isAlive, processStartTicks } from '../lab/proc/procStat.js';
import { undoRunner } from '../lab/RuntimePlugin.js';
import { runCommandSync } from './shellCommand.js';

/**
 * The fault journal: every applied fault is written (and fsynced) here *before* it is
 * applied, and removed after it is undone. If the orchestrator dies in between (even
 * by SIGKILL), the next metabench command finds the entry and undoes it.
 *
 * One file per orchestrator process: <state>/journal/<pid>.json; a worker thread's runs (sweep
 * --jobs) have their own, <pid>-thread<id>.json. Threads sharing one file overwrote each
 * other's entries and raced on its temporary file (a sweep failed with ENOENT on rename).
 */
export function stateDir(): string {
  // An empty variable counts as unset (as XDG says), never as the current directory.
  return (
    process.env.METABENCH_STATE_DIR ||
    join(process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'metabench')
  );
}

export interface JournalEntry {
  readonly id: string;
  readonly appliedAt: string;
  readonly undo: UndoRecipe;
}

interface JournalFile {
  readonly owner: { pid: number; startTicks: number | null };
  readonly entries: JournalEntry[];
}

export class Journal {
  private readonly file: string;
  private readonly entries = new Map<string, JournalEntry>();

  constructor(dir = join(stateDir(), 'journal')) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, threadId === 0 ? `${process.pid}.json` : `${process.pid}-thread${threadId}.json`);
  }

  /** Records a fault about to be applied. Returns only once it is on disk. */
  record(entry: JournalEntry): void {
    this.entries.set(entry.id, entry);
    this.flush();
  }

  /** Forgets a fault that has been undone. */
  clear(id: string): void {
    if (this.entries.delete(id)) this.flush();
  }

  private flush(): void {
    if (this.entries.size === 0) {
      rmSync(this.file, { force: true });
      return;
    }
    const body: JournalFile = {
      owner: { pid: process.pid, startTicks: processStartTicks(process.pid) },
      entries: [...this.entries.values()],
    };
    writeDurably(this.file, JSON.stringify(body, null, 2));
  }
}

function writeDurably(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Executes one undo recipe; returns a sentence saying what it did. Throws when it could not. */
export function runUndo(undo: UndoRecipe): string {
  switch (undo.kind) {
    case 'none':
      return `${undo.what}: nothing to undo`;
    case 'signal': {
      if (!isAlive(undo.pid)) return `${undo.what}: process ${undo.pid} is gone, nothing to undo`;
      const ticks = processStartTicks(undo.pid);
      if (undo.startTicks !== null && ticks !== null && ticks !== undo.startTicks)
        return `${undo.what}: pid ${undo.pid} now belongs to another process, left alone`;
      process.kill(undo.pid, undo.signal);
      return `${undo.what}: sent ${undo.signal} to pid ${undo.pid}`;
    }
    case 'signals': {
      const sent: number[] = [];
      for (const t of undo.targets) {
        if (!isAlive(t.pid)) continue;
        const ticks = processStartTicks(t.pid);
        if (t.startTicks !== null && ticks !== null && ticks !== t.startTicks) continue;
        process.kill(t.pid, undo.signal);
        sent.push(t.pid);
      }
      return sent.length > 0
        ? `${undo.what}: sent ${undo.signal} to pids ${sent.join(', ')}`
        : `${undo.what}: the processes are gone, nothing to undo`;
    }
    case 'http':
      return runHttpUndo(undo);
    case 'steps':
      return `${undo.what}: ${undo.steps.map(runUndo).join('; ')}`;
    case 'remove': {
      // Only ever a directory the lab made under the temp dir.
      const path = resolve(undo.path);
      if (!path.startsWith(join(tmpdir(), 'metabench-')))
        return `${undo.what}: ${path} is not a metabench temporary directory, left alone`;
      if (!existsSync(path)) return `${undo.what}: ${path} is already gone`;
      rmSync(path, { recursive: true, force: true });
      return `${undo.what}: removed ${path}`;
    }
    case 'shell':
      runCommandSync(undo.command, undo.cwd);
      return `${undo.what}: ran \`${undo.command}\` in ${undo.cwd}`;
    case 'docker': {
      // Only the docker runtime knows its engine; the composition root registered it.
      const run = undoRunner('docker');
      if (!run) throw new Error(`${undo.what}: no registered runtime undoes a docker recipe`);
      return run(undo);
    }
    case 'http-forwarded': {
      const run = undoRunner('http-forwarded');
      if (!run) throw new Error(`${undo.what}: no registered runtime forwards to a swarm stack`);
      return run(undo);
    }
    case 'compose-down': {
      const run = undoRunner('compose-down');
      if (!run) throw new Error(`${undo.what}: no registered runtime takes a compose project down`);
      return run(undo);
    }
  }
}

/**
 * Sends an HTTP undo synchronously (recovery runs before any command, from sync code):
 * a child node process does the fetch. The fault proxy must therefore not live in this
 * process; the lab runs it as a child process.
 */
function runHttpUndo(undo: Extract<UndoRecipe, { kind: 'http' }>): string {
  const script = `
    const r = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    // A timer that keeps this process alive (AbortSignal.timeout's does not: foundation/within.ts).
    const ctl = new AbortController();
    const limit = setTimeout(() => ctl.abort(new Error('no answer within 5 s')), 5000);
    const init = { method: r.method, signal: ctl.signal };
    if (r.body !== undefined) { init.body = JSON.stringify(r.body); init.headers = { 'Content-Type': 'application/json' }; }
    fetch(r.url, init).finally(() => clearTimeout(limit)).then(
      async (res) => process.stdout.write(JSON.stringify({ status: res.status, text: await res.text() })),
      (err) => process.stdout.write(JSON.stringify({ error: String(err && err.cause && err.cause.code || err && err.message || err) })),
    );`;
  const child = spawnSync(process.execPath, ['-e', script], {
    input: JSON.stringify(undo),
    encoding: 'utf8',
    timeout: 10_000,
  });
  let out: { status?: number; text?: string; error?: string };
  try {
    out = JSON.parse(child.stdout) as typeof out;
  } catch {
    throw new Error(
      `${undo.method} ${undo.url} did not complete (${child.error?.message ?? child.stderr.trim()})`,
    );
  }
  if (out.error !== undefined) {
    if (out.error === 'ECONNREFUSED')
      return `${undo.what}: nothing answers at ${new URL(undo.url).host} any more (gone, its faults with it), nothing to undo`;
    throw new Error(`${undo.method} ${undo.url}: ${out.error}`);
  }
  const status = out.status ?? 0;
  if (status >= 200 && status < 300) return `${undo.what}: ${undo.method} ${undo.url} (HTTP ${status})`;
  if (status === 404) return `${undo.what}: already undone (HTTP 404 ${(out.text ?? '').trim()})`;
  throw new Error(`${undo.method} ${undo.url}: HTTP ${status} ${(out.text ?? '').trim()}`);
}

/**
 * What this process (and its worker threads) has applied and not yet undone, by each
 * recipe's `what`, the oldest first: the faults and labs a forced exit would leave behind.
 */
export function appliedNow(dir = join(stateDir(), 'journal'), pid = process.pid): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter(
      (n) => n === `${pid}.json` || (n.startsWith(`${pid}-thread`) && n.endsWith('.json')),
    );
  } catch {
    return [];
  }
  const out: string[] = [];
  // The main thread's first, then its worker threads'.
  const main = `${pid}.json`;
  for (const name of names.sort((a, b) => (a === main ? -1 : b === main ? 1 : a.localeCompare(b)))) {
    try {
      const body = JSON.parse(readFileSync(join(dir, name), 'utf8')) as JournalFile;
      for (const e of body.entries) out.push(e.undo.what);
    } catch {
      // Being rewritten (renamed into place) or already removed: nothing to name from it.
    }
  }
  return out;
}

/**
 * Undoes the faults left behind by orchestrators that are no longer running.
 * Returns one line per undone action (empty when there was nothing to do).
 */
/** Whether any journal file is there (whether recoverOrphanedFaults may have anything to undo). */
export function orphanedJournals(dir = join(stateDir(), 'journal')): boolean {
  try {
    return readdirSync(dir).some((n) => n.endsWith('.json'));
  } catch {
    return false;
  }
}

export function recoverOrphanedFaults(dir = join(stateDir(), 'journal')): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const said: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let body: JournalFile;
    try {
      body = JSON.parse(readFileSync(file, 'utf8')) as JournalFile;
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    const ownerAlive =
      isAlive(body.owner.pid) &&
      (body.owner.startTicks === null || processStartTicks(body.owner.pid) === body.owner.startTicks);
    if (ownerAlive) continue;
    // The last applied first, as a run undoes them: a fault before the lab it acts on.
    for (const e of [...body.entries].reverse()) {
      try {
        said.push(runUndo(e.undo));
      } catch (err) {
        said.push(`${e.undo.what}: could not undo (${(err as Error).message})`);
      }
    }
    rmSync(file, { force: true });
  }
  return said;
}
