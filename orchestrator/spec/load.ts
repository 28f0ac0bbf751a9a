import type { Override } from '../../foundation/overrides.js';
import { applyOverrides } from '../../foundation/overrides.js';
import { SpecError, type SpecIssue } from '../../foundation/errors.js';
import { parseYamlFile, readSpecFile, toSpecIssues, type ParsedYaml } from '../../foundation/yamlFile.js';
import { experimentSchema, type Experiment } from './schema.js';
import { migrateMixThresholds, warnOnce } from './deprecated.js';
import { fileURLToPath } from 'node:url';

/** The catalogue's folder, whose names a missing experiment file is compared with. */
export const CATALOGUE_DIR = fileURLToPath(new URL('../../../experiments/', import.meta.url));

export { didYouMean } from '../../foundation/didYouMean.js';

/** Reads, parses and validates an experiment file; throws SpecError listing every problem. */
export function loadExperimentFile(file: string, overrides: readonly Override[] = []): Experiment {
  return parseExperiment(readSpecFile(file, [CATALOGUE_DIR]), file, overrides);
}

export function parseExperiment(
  buf: Buffer | string,
  file: string,
  overrides: readonly Override[] = [],
  warn?: (w: SpecIssue) => void,
): Experiment {
  return validateExperiment(parseYamlFile(buf, file), overrides, warn);
}

/**
 * Validates parsed experiment data after applying `overrides`; every problem at once. A
 * deprecated spelling is translated (spec/deprecated.ts) and reported to `warn` (by
 * default on stderr, once a process).
 */
export function validateExperiment(
  y: ParsedYaml,
  overrides: readonly Override[] = [],
  warn: (w: SpecIssue) => void = warnOnce,
): Experiment {
  // A sweep file given where an experiment goes would fail a dozen schema checks; one line says what it is.
  if ('factors' in y.data && 'experiment' in y.data)
    throw new SpecError([
      {
        file: y.file,
        line: 1,
        column: 1,
        path: '',
        message: `this is a sweep file (it has experiment: and factors:): use \`metabench sweep ${y.file}\``,
      },
    ]);
  const data = overrides.length ? applyOverrides(y.data, overrides) : y.data;
  const result = experimentSchema.safeParse(data, { reportInput: true });
  if (!result.success)
    throw new SpecError(
      toSpecIssues(result.error.issues, y.doc, y.lines, y.file, overrides, experimentSchema),
    );
  const migrated = migrateMixThresholds(result.data, y, data);
  if (migrated.issues.length) throw new SpecError(migrated.issues);
  for (const w of migrated.warnings) warn(w);
  return migrated.experiment;
}
