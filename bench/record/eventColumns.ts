import { FAILURE_KINDS } from '../outcome.js';

/**
 * The columns of events.arrow, shared by its writer (arrowEvents.ts) and its reader
 * (eventRead.ts). One row per attempt, per origin outcome and per locally refused attempt:
 * the lines of events.ndjson that make up nearly all of it. Each event type uses some of
 * the columns; the others are null in its rows. Rarer lines (trigger actions, breaker
 * transitions, swarm tasks) go whole to the notes table (NOTE_COLUMNS).
 */
export type ColumnType = 'f64' | 'i32' | 'i16' | 'bool' | 'dict';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  /** A dictionary column's values, fixed: the file's dictionary is written once. */
  readonly values?: readonly string[];
}

export const EVENT_TYPES = ['attempt', 'outcome', 'rejected'] as const;
export const KINDS = ['ok', ...FAILURE_KINDS] as const;
/** The policies that refuse an attempt locally (PolicyEvent `rejected`'s `by`). */
export const REFUSERS = ['breaker', 'throttle'] as const;

export const EVENT_COLUMNS: readonly ColumnSpec[] = [
  { name: 'e', type: 'dict', values: EVENT_TYPES },
  { name: 'origin', type: 'i32' },
  { name: 'cls', type: 'i16' },
  { name: 'n', type: 'i32' },
  { name: 'intendedMs', type: 'f64' },
  { name: 'sentMs', type: 'f64' },
  { name: 'endMs', type: 'f64' },
  { name: 'kind', type: 'dict', values: KINDS },
  { name: 'status', type: 'i16' },
  { name: 'clientWaitMs', type: 'f64' },
  { name: 'hedge', type: 'bool' },
  { name: 'replica', type: 'i16' },
  { name: 'tokens', type: 'i32' },
  { name: 'ttftMs', type: 'f64' },
  { name: 'itlMs', type: 'f64' },
  { name: 'by', type: 'dict', values: REFUSERS },
  { name: 'client', type: 'i16' },
];

/** A column's index in EVENT_COLUMNS, by name. */
export const COL = Object.fromEntries(EVENT_COLUMNS.map((c, i) => [c.name, i])) as Record<string, number>;

/**
 * Which field of an ndjson line each event type keeps in which column, in the line's
 * own order: [field, column]. An outcome's `attempts` (the attempt that decided it) is
 * column `n`; a refusal's `atMs` is column `endMs` (when it was refused).
 */
export const FIELDS: Readonly<Record<(typeof EVENT_TYPES)[number], readonly (readonly [string, string])[]>> =
  {
    attempt: [
      ['origin', 'origin'],
      ['cls', 'cls'],
      ['n', 'n'],
      ['intendedMs', 'intendedMs'],
      ['sentMs', 'sentMs'],
      ['endMs', 'endMs'],
      ['kind', 'kind'],
      ['status', 'status'],
      ['clientWaitMs', 'clientWaitMs'],
      ['hedge', 'hedge'],
      ['replica', 'replica'],
      ['tokens', 'tokens'],
      ['ttftMs', 'ttftMs'],
      ['itlMs', 'itlMs'],
    ],
    outcome: [
      ['origin', 'origin'],
      ['intendedMs', 'intendedMs'],
      ['endMs', 'endMs'],
      ['kind', 'kind'],
      ['attempts', 'n'],
    ],
    rejected: [
      ['origin', 'origin'],
      ['n', 'n'],
      ['by', 'by'],
      ['atMs', 'endMs'],
      ['client', 'client'],
    ],
  };

/**
 * The notes table (events.notes.arrow): every other line whole, as JSON, with its type,
 * its time when it has one, and `seq`, how many rows events.arrow had when it was
 * written (a reader merging both puts it before that row).
 */
export const NOTE_COLUMNS = ['seq', 'e', 'atMs', 'json'] as const;
