import { InvalidArgumentError, type Command } from 'commander';
import { PDF_WIDTHS, type PdfWidth } from '../report/pdf.js';
import { writeReport } from '../report/writeReport.js';

export function register(program: Command): void {
  program
    .command('report')
    .description(
      're-render report.md, report.html, figures/ and data/ of a results folder from its files alone',
    )
    .argument('<results-dir>', 'a folder `metabench run`, `sweep` or `calibrate` wrote')
    .option(
      '--pdf <width>',
      `each figure also as vector PDF (figures/<id>.pdf, fonts embedded) ${Object.entries(PDF_WIDTHS)
        .map(([k, cm]) => `${k} (${cm} cm wide)`)
        .join(' | ')} | none`,
      (v: string): PdfWidth | 'none' => {
        if (v === 'none' || v in PDF_WIDTHS) return v as PdfWidth | 'none';
        throw new InvalidArgumentError(
          `--pdf takes ${Object.keys(PDF_WIDTHS).join(', ')} or none (got "${v}")`,
        );
      },
      'column',
    )
    .action(async (dir: string, o: { pdf: PdfWidth | 'none' }) => {
      const files = await writeReport(dir, { pdf: o.pdf });
      process.stderr.write(`metabench: wrote ${files.length} files in ${dir}\n`);
      process.stdout.write(`${dir}\n`);
    });
}
