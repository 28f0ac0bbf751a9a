import { ExitCode } from './exitCodes.js';

export type BenchErrorCode =
  | 'E_SPEC_INVALID'
  | 'E_USAGE'
  | 'E_LAB_PREFLIGHT'
  | 'E_LAB'
  | 'E_RUN_UNUSABLE'
  | 'E_INTERRUPTED'
  | 'E_VERDICT';

const exitFor: Record<BenchErrorCode, ExitCode> = {
  E_SPEC_INVALID: ExitCode.invalidSpec,
  E_USAGE: ExitCode.usage,
  E_LAB_PREFLIGHT: ExitCode.preflight,
  E_LAB: ExitCode.internal,
  E_RUN_UNUSABLE: ExitCode.unusable,
  E_INTERRUPTED: ExitCode.unusable,
  E_VERDICT: ExitCode.verdict,
};

/**
 * An error we expected and can explain: printed as its message (and hint), without a
 * stack trace, and mapped to a stable exit code. Anything else is an internal error.
 */
export class BenchError extends Error {
  readonly isBenchError = true;
  constructor(
    readonly code: BenchErrorCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'BenchError';
  }
  get exitCode(): ExitCode {
    return exitFor[this.code];
  }
}

export function isBenchError(e: unknown): e is BenchError {
  return typeof e === 'object' && e !== null && (e as { isBenchError?: unknown }).isBenchError === true;
}

/** One problem in an experiment file, located as precisely as the file allows. */
export interface SpecIssue {
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  /** Dotted field path, e.g. client.retry.maxAttempts */
  readonly path: string;
  readonly message: string;
}

export function formatIssue(i: SpecIssue): string {
  const where = i.line !== undefined ? `${i.file}:${i.line}:${i.column ?? 1}` : i.file;
  return i.path ? `${where}: ${i.path}: ${i.message}` : `${where}: ${i.message}`;
}

/** Every problem found in a file, reported at once. */
export class SpecError extends BenchError {
  constructor(readonly issues: readonly SpecIssue[]) {
    super('E_SPEC_INVALID', issues.map(formatIssue).join('\n'));
  }
}
