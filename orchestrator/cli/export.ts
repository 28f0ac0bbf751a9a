import type { Command } from 'commander';
import { GrafanaClient } from '../grafana/client.js';
import { exportPanels } from '../grafana/exportPanels.js';
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
      'the Grafana to render with',
      process.env.METABENCH_GRAFANA_URL ?? `http://127.0.0.1:${process.env.METABENCH_GRAFANA_PORT ?? '3000'}`,
    )
    .option('--width <PX>', 'width of each PNG', wholeNumber('--width', 100, 8000), 1000)
    .option('--height <PX>', 'height of each PNG', wholeNumber('--height', 100, 8000), 500)
    .action(async (dir: string, o: { grafanaUrl: string; width: number; height: number }) => {
      const files = await exportPanels(new GrafanaClient(o.grafanaUrl), dir, {
        width: o.width,
        height: o.height,
      });
      for (const f of files) process.stdout.write(`${f}\n`);
      process.stderr.write(`metabench: ${files.length} panels exported from ${o.grafanaUrl}\n`);
    });
}
