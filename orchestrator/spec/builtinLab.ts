import { BenchError } from '../../foundation/errors.js';
import type { LabSection } from './sections/lab.js';

/**
 * The experiment's built-in lab, where the code needs it: the simulation, the queueing model,
 * the nominal capacity c / S, the api's time constants all describe the lab metabench wrote.
 * An experiment declares either `lab:` or `system:` (its own system, whose work metabench does
 * not know): for the latter this refuses with `needs`, the feature in words, named.
 */
export function builtinLab(
  e: { readonly name: string; readonly lab?: LabSection | undefined },
  needs: string,
): LabSection {
  if (e.lab) return e.lab;
  throw new BenchError(
    'E_USAGE',
    `${needs} needs the built-in lab (lab:), whose work metabench knows; experiment "${e.name}" declares its own system (system:)`,
  );
}
