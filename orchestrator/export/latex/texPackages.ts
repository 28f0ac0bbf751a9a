import { spawnSync } from 'node:child_process';

/**
 * The LaTeX packages main.tex loads, each with where it comes from on each platform.
 * One list: main.tex's \usepackage lines are written from it, `export latex` checks it with
 * kpsewhich, docs/export.md names the same Debian packages and .ci/run installs exactly them.
 */
export interface TexPackage {
  /** The package's name (its file is NAME.sty). */
  readonly name: string;
  /** Its options in main.tex, if any. */
  readonly options?: string;
  /** The Debian/Ubuntu package that holds it. */
  readonly debian: string;
  /** TeX Live's (tlmgr's) package name; Fedora packages it as texlive-NAME. */
  readonly tlmgr: string;
}

export const MAIN_TEX_PACKAGES: readonly TexPackage[] = [
  { name: 'inputenc', options: 'utf8', debian: 'texlive-latex-base', tlmgr: 'latex' },
  { name: 'geometry', options: 'margin=2.5cm', debian: 'texlive-latex-base', tlmgr: 'geometry' },
  { name: 'booktabs', debian: 'texlive-latex-recommended', tlmgr: 'booktabs' },
  { name: 'array', debian: 'texlive-latex-base', tlmgr: 'tools' },
  { name: 'siunitx', debian: 'texlive-science', tlmgr: 'siunitx' },
  { name: 'graphicx', debian: 'texlive-latex-base', tlmgr: 'graphics' },
  { name: 'float', debian: 'texlive-latex-recommended', tlmgr: 'float' },
];

/** The Debian packages that compile main.tex (pdflatex itself is in texlive-latex-base). */
export function debianPackages(pkgs: readonly TexPackage[] = MAIN_TEX_PACKAGES): string[] {
  return [...new Set(['texlive-latex-base', ...pkgs.map((p) => p.debian)])].sort();
}

/** How to install `pkgs` on each platform, one line each. */
function installLines(pkgs: readonly TexPackage[]): string[] {
  const tl = [...new Set(pkgs.map((p) => p.tlmgr))];
  return [
    `  Debian/Ubuntu: sudo apt-get install ${debianPackages(pkgs).join(' ')}`,
    `  Fedora: sudo dnf install texlive-scheme-basic ${tl.map((n) => `texlive-${n}`).join(' ')}`,
    `  macOS: MacTeX has them all; BasicTeX: sudo tlmgr install ${tl.join(' ')}`,
    `  TeX Live elsewhere: tlmgr install ${tl.join(' ')}`,
  ];
}

/**
 * What stops main.tex from compiling here: no pdflatex, or .sty files kpsewhich does not find.
 * Null when pdflatex and every package are there. The message names each missing package and
 * the platform package to install. `env` is the environment the TeX tools run in.
 */
export function texProblems(
  pkgs: readonly TexPackage[] = MAIN_TEX_PACKAGES,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const tool = (cmd: string, args: string[]) =>
    spawnSync(cmd, args, { env, encoding: 'utf8', timeout: 30_000 });
  const engine = tool('pdflatex', ['--version']);
  if (engine.error || engine.status !== 0)
    return [
      'main.tex needs pdflatex, which is not on this PATH: install TeX with the packages main.tex uses:',
      ...installLines(pkgs),
    ].join('\n');
  // kpsewhich prints the path of each file it finds, in order, and nothing for a missing one.
  const found = tool(
    'kpsewhich',
    pkgs.map((p) => `${p.name}.sty`),
  );
  const paths = new Set((found.stdout ?? '').split('\n').map((l) => l.trim().replace(/^.*\//, '')));
  const missing = pkgs.filter((p) => !paths.has(`${p.name}.sty`));
  if (missing.length === 0) return null;
  return [
    `main.tex will not compile here: ${missing
      .map((p) => `${p.name}.sty (Debian/Ubuntu package ${p.debian})`)
      .join(', ')} not found by kpsewhich; install:`,
    ...installLines(missing),
  ].join('\n');
}
