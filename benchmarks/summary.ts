/**
 * The last step of `npm run bench`: every benchmark's figures beside its goal, met or
 * not, from what each wrote to benchmarks/results/goals/, in
 * benchmarks/results/bench-<date>.md (and on standard output).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readGoals, renderSummary, RESULTS_DIR } from './goals.js';

const text = renderSummary(readGoals());
const file = join(RESULTS_DIR, `bench-${new Date().toISOString().slice(0, 10)}.md`);
writeFileSync(file, text);
process.stdout.write(`${text}\nwritten to ${file}\n`);
