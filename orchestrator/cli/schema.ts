import type { Command } from 'commander';
import { jsonSchemaText } from '../spec/jsonSchema.js';

export function register(program: Command): void {
  program
    .command('schema')
    .description(
      'print the JSON Schema of experiment files (or of sweep files), for editors: start a file with\n' +
        '`# yaml-language-server: $schema=<path to schema/experiment.schema.json>`',
    )
    .option('--sweep', 'the schema of sweep files')
    .action((o: { sweep?: boolean }) => {
      process.stdout.write(jsonSchemaText(o.sweep ? 'sweep' : 'experiment'));
    });
}
