import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import { parseEnvFile } from '../lab/engine/images.js';
import { GrafanaClient } from '../grafana/client.js';
import { exportPanels } from '../grafana/exportPanels.js';
import { writeBundle } from '../export/bundle.js';
import { isSweepFolder, writeSweepBundle } from '../export/sweepBundle.js';
import { writeLatex } from '../export/latex/writeLatex.js';
import { texProblems } from '../export/latex/texPackages.js';
import { wholeNumber } from './options.js';

export function register(program: Command): void {
  const exp = program.command('export').description('export a results folder to another tool');
  exp
    .command('grafana')
    .description(
      "a PNG of each panel of Grafana's metabench dashboard over the runs' time range, into <results-dir>/grafana/",
    )
    .argument('<results-dir>', 'a folder `metabench run --runtime docker` wrote')
    .option(
      '--grafana-url <URL>',
      'the Grafana to render with (default: METABENCH_GRAFANA_URL, else 127.0.0.1 on METABENCH_GRAFANA_PORT or 3000)',
    )
    .option(
      '--env-file <FILE>',
      'the compose env file the lab was brought up with: its METABENCH_GRAFANA_PORT finds the lab’s Grafana',
    )
    .option('--width <PX>', 'width of each PNG', wholeNumber('--width', 100, 8000), 1000)
    .option('--height <PX>', 'height of each PNG', wholeNumber('--height', 100, 8000), 500)
    .action(
      async (dir: string, o: { grafanaUrl?: string; envFile?: string; width: number; height: number }) => {
        const url = o.grafanaUrl ?? grafanaUrl(o.envFile);
        const files = await exportPanels(new GrafanaClient(url), dir, {
          width: o.width,
          height: o.height,
        });
        for (const f of files) process.stdout.write(`${f}\n`);
        process.stderr.write(`metabench: ${files.length} panels exported from ${url}\n`);
      },
    );
  exp
    .command('bundle')
    .description(
      'a reproduction bundle (.tar.gz): the experiment (or sweep) as run, the manifests and summaries, versions, and REPRODUCE.md with the command that re-runs it',
    )
    .argument('<results-dir>', 'a folder `metabench run` or `metabench sweep` wrote')
    .option('--out <FILE>', 'where to write the bundle (default: <results-dir>.tar.gz)')
    .action(async (dir: string, o: { out?: string }) => {
      const file = isSweepFolder(dir) ? await writeSweepBundle(dir, o.out) : await writeBundle(dir, o.out);
      process.stdout.write(`${file}\n`);
    });
  exp
    .command('latex')
    .description(
      'LaTeX for a thesis: tables/*.tex (booktabs, siunitx), figures/*.pdf with figures.tex, methods.tex from the manifest, and a main.tex that compiles on its own',
    )
    .argument('<results-dir>', 'a folder `metabench run`, `metabench sweep` or `metabench calibrate` wrote')
    .option('--out <DIR>', 'where to write (default: <results-dir>/latex)')
    .action(async (dir: string, o: { out?: string }) => {
      for (const f of await writeLatex(dir, o.out)) process.stdout.write(`${f}\n`);
      // The files are written either way (they compile elsewhere too); what would stop them here is said.
      const problems = texProblems();
      if (problems !== null) process.stderr.write(`metabench: warning: ${problems}\n`);
    });
}

/** The lab's Grafana: METABENCH_GRAFANA_URL, else its port as compose resolves it (the environment over the env file). */
function grafanaUrl(envFile: string | undefined): string {
  if (process.env.METABENCH_GRAFANA_URL) return process.env.METABENCH_GRAFANA_URL;
  let fromFile: Record<string, string> = {};
  if (envFile !== undefined) {
    try {
      fromFile = parseEnvFile(readFileSync(envFile, 'utf8'));
    } catch (err) {
      throw new BenchError(
        'E_USAGE',
        `--env-file ${envFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }
  const port = process.env.METABENCH_GRAFANA_PORT || fromFile.METABENCH_GRAFANA_PORT || '3000';
  return `http://127.0.0.1:${port}`;
}
