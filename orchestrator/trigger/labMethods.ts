import { BenchError } from '../../foundation/errors.js';
import type { Lab } from '../lab/Lab.js';

/** The lab with the optional methods a kind needs; an E_LAB error naming what it cannot do where it lacks one. */
export function labWith<K extends keyof Lab>(
  lab: Lab,
  methods: readonly K[],
  cannot: string,
): Required<Pick<Lab, K>> {
  if (methods.some((m) => lab[m] === undefined))
    throw new BenchError('E_LAB', `the ${lab.runtime} lab ${cannot}`);
  return lab as unknown as Required<Pick<Lab, K>>;
}
