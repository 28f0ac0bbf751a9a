/**
 * "Usable" has one meaning everywhere (summary.json, the report's table, exit code 11):
 * the run may be cited for a verdict. That needs every offered origin accounted for, a run
 * that was not interrupted, and a valid run (docs/metrics.md "Run validity"): an invalid
 * run gives no verdict, so it is never usable.
 */
export function isUsable(r: {
  readonly offered: number;
  readonly recorded: number;
  readonly unsent: number;
  readonly interrupted: boolean;
  readonly valid: boolean;
}): boolean {
  return r.offered === r.recorded && r.unsent === 0 && !r.interrupted && r.valid;
}
