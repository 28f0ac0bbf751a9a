/** Stable exit codes of the CLI (DESIGN.md §7), so scripts can tell a failed hypothesis from a broken tool. */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  invalidSpec: 3,
  preflight: 4,
  verdict: 10,
  unusable: 11,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
