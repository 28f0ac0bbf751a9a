import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

// The first hour as the docs give it (issue 33), read from the docs themselves so that a
// changed doc is what test/integration/first-hour.test.ts checks and benchmarks/firstHour.ts
// times: every `npx metabench …` line of a ```sh block of the README's "## Start" section and
// of docs/guide.md, with its comment (where a lab command says how long it takes) and the
// ```text block right after its block (the lines it prints or its report holds; "…" elides
// text), and every ```yaml block the guide asks to save ("Save this as `PATH`").

export interface DocCommand {
  /** file:line of the command in the docs */
  readonly where: string;
  /** the words after `npx metabench` */
  readonly args: readonly string[];
  /** the command's shell comment, e.g. "on the local lab: about 2 min" */
  readonly comment: string;
  /** the lines of the ```text block after the command's block */
  readonly claims: readonly string[];
}

export interface DocSave {
  readonly path: string;
  readonly text: string;
}

interface Block {
  readonly doc: string;
  readonly line: number;
  readonly lang: string;
  readonly text: string;
  /** the prose between the previous block and this one */
  readonly before: string;
}

/** The fenced blocks of `text` whose first line is line `first` of `doc`, each with the prose before it. */
function blocks(doc: string, text: string, first = 1): Block[] {
  const lines = text.split('\n');
  const out: Block[] = [];
  let prose: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\w*)/.exec(lines[i] ?? '');
    if (!open) {
      prose.push(lines[i] ?? '');
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    out.push({
      doc,
      line: first + start + 1,
      lang: open[1] ?? '',
      text: body.join('\n'),
      before: prose.join('\n'),
    });
    prose = [];
  }
  return out;
}

/** A shell line's words, quoting removed, and its comment apart. */
export function words(line: string): { argv: string[]; comment: string } {
  const argv: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(#.*$)|(\S+)/g)) {
    if (m[3] !== undefined) return { argv, comment: m[3].slice(1).trim() };
    argv.push(m[1] ?? m[2] ?? m[4] ?? '');
  }
  return { argv, comment: '' };
}

/** The README's first screen: its "## Start" section, and the line it starts on. */
export function firstScreen(readme: string): { text: string; line: number } {
  const start = readme.indexOf('\n## Start');
  if (start < 0) throw new Error('README.md has no "## Start" section');
  const end = readme.indexOf('\n## ', start + 1);
  return {
    text: readme.slice(start + 1, end < 0 ? undefined : end),
    line: readme.slice(0, start).split('\n').length + 1,
  };
}

/** The first hour's commands and the files to save, from README.md and docs/guide.md under `repo`. */
export function firstHour(repo: string): { commands: DocCommand[]; saves: DocSave[]; readmeStart: string } {
  const screen = firstScreen(readFileSync(join(repo, 'README.md'), 'utf8'));
  const all = [
    ...blocks('README.md', screen.text, screen.line),
    ...blocks('docs/guide.md', readFileSync(join(repo, 'docs/guide.md'), 'utf8')),
  ];
  const commands: DocCommand[] = [];
  for (const [i, b] of all.entries()) {
    if (b.lang !== 'sh') continue;
    const next = all[i + 1];
    const claims =
      next && next.doc === b.doc && next.lang === 'text' && next.before.trim() === ''
        ? next.text.split('\n').filter((l) => l.trim() !== '')
        : [];
    b.text.split('\n').forEach((l, k) => {
      const { argv, comment } = words(l);
      if (argv[0] === 'npx' && argv[1] === 'metabench')
        commands.push({ where: `${b.doc}:${b.line + k}`, args: argv.slice(2), comment, claims });
    });
  }
  const saves = all.flatMap((b) => {
    const m = /Save\s+this\s+as\s+`([^`]+)`/.exec(b.before);
    return b.lang === 'yaml' && m ? [{ path: m[1]!, text: b.text }] : [];
  });
  return { commands, saves, readmeStart: screen.text };
}

/** Whether a command runs in simulation (the rest start the lab). */
export const simulated = (c: DocCommand): boolean => c.args.join(' ').includes('--runtime sim');

/** A new user's folder under `dir`: the catalogue and the fixtures the docs name, and the files the guide saves. */
export function userFolder(repo: string, dir: string, saves: readonly DocSave[]): string {
  cpSync(join(repo, 'experiments'), join(dir, 'experiments'), { recursive: true });
  cpSync(join(repo, 'test/fixtures/sweeps'), join(dir, 'test/fixtures/sweeps'), { recursive: true });
  saveFiles(dir, saves);
  return dir;
}

/** Saves the files the guide asks for, under `dir` (a user's folder or a clone). */
export function saveFiles(dir: string, saves: readonly DocSave[]): void {
  for (const s of saves) {
    mkdirSync(dirname(join(dir, s.path)), { recursive: true });
    writeFileSync(join(dir, s.path), `${s.text}\n`);
  }
}

/** The time a comment claims, its last "about N min" or "about N s" ("12 runs of about 2 min: about 24 min": 1440 s). */
export function claimedS(comment: string): number | undefined {
  const m = [...comment.matchAll(/about\s+([\d.]+)\s*(min|minutes?|s|seconds?)\b/g)].pop();
  return m ? Number(m[1]) * (m[2]!.startsWith('min') ? 60 : 1) : undefined;
}

/** A dry run's wall-time estimate: run's "≈ 97.7s per run … × n = ≈ 97.7s", sweep's "≈ 1163 s". */
export function estimateS(stdout: string): number | undefined {
  const line = /wall time: .*$/m.exec(stdout)?.[0];
  if (line === undefined || line.includes('simulated')) return undefined;
  const m = /= ≈ ([\d.]+) ?(s|min)\b/.exec(line) ?? /≈ ([\d.]+) ?(s|min)\b/.exec(line);
  return m ? Number(m[1]) * (m[2] === 'min' ? 60 : 1) : undefined;
}

/** A claimed line as a pattern: "…" elides text, markdown's ** is not compared, runs of spaces are one. */
export function claimPattern(claim: string): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(normalLine(claim).split('…').map(esc).join('.*?'));
}

/** A printed or written line as claims are compared with it. */
export function normalLine(line: string): string {
  return line.replace(/\*\*/g, '').trim().replace(/\s+/g, ' ');
}
