/**
 * The trials table, listed once. Every trial insert (a commit's new trials, an import), every
 * guarded update (a commit's trial changes) and every row read, on SQLite and on PostgreSQL, is
 * built from this list: a column's name, its SQL type in each database, and how a TrialRecord
 * becomes the column's value and back. A new field of a trial is one entry here (or, for a field
 * of the outcome, one name in OUTCOME_FIELDS, which needs no migration) and its field in the
 * record type (storage.ts).
 *
 * The drivers differ only in how a JSON column and a boolean travel: better-sqlite3 takes and
 * returns JSON as text and booleans as 0 or 1; node-postgres returns JSON parsed and booleans as
 * booleans, and the PostgreSQL writes send their rows as one JSON document (json_to_recordset),
 * in which a JSON column is a nested value.
 */
import type { Columns } from './rows.js';
import type { JsonValue, TrialRecord, TrialState, TrialUpdate } from './storage.js';

type Kind = 'text' | 'integer' | 'real' | 'json' | 'boolean';

/** What a guarded update writes: the mutable part of a trial (TrialUpdate's fields and the update time). */
export type TrialChange = Omit<TrialUpdate, 'trialId' | 'expectedState'> & Pick<TrialRecord, 'updatedAt'>;

interface Column<R> {
  /** The SQL column. */
  readonly name: string;
  readonly kind: Kind;
  /** Its declared type in each database, as the migrations created it (test/storage/trial-columns.test.ts checks both schemas). */
  readonly sqlite: string;
  readonly postgres: string;
  /** The column's value for a record: a JSON column's JSON value, null for SQL NULL. */
  get(r: R): JsonValue;
  /**
   * The record's fields the column holds: one, whose value is the column's (decoded), or, for an
   * `object` column, each of them a member of the JSON object (null when absent or NULL).
   */
  readonly fields: readonly (keyof TrialRecord)[];
  readonly object?: true;
}

/**
 * The fields of a trial's outcome, stored together in the JSON column `outcome` (only those that
 * are not null; NULL when all are): what the user reported for the trial.
 */
export const OUTCOME_FIELDS = ['value', 'stderr', 'values', 'constraints', 'infeasible'] as const satisfies readonly (keyof TrialRecord)[];
/**
 * The outcome fields of several objectives and constraints, optional in the record: a record read
 * back has them only when they are set, so that a trial of a study without them reads as it always did.
 */
const OPTIONAL_FIELDS: ReadonlySet<string> = new Set(['values', 'constraints', 'infeasible']);
type OutcomeField = (typeof OUTCOME_FIELDS)[number];

function outcomeOf(r: Pick<TrialRecord, OutcomeField>): JsonValue {
  let out: { [k: string]: JsonValue } | null = null;
  for (const f of OUTCOME_FIELDS) {
    const v = r[f];
    if (v !== null && v !== undefined) (out ??= {})[f] = v;
  }
  return out;
}

/** A column holding one field of the record as it is. */
function field<R extends object, K extends keyof R & keyof TrialRecord>(name: string, key: K, kind: Kind, sqlite: string, postgres: string): Column<R> {
  return {
    name,
    kind,
    sqlite,
    postgres,
    get: (r) => r[key] as JsonValue,
    fields: [key],
  };
}

const f = field<TrialRecord, keyof TrialRecord>;
const m = field<TrialChange, keyof TrialChange>;

/** The columns a guarded update writes, in the order of TrialRecord's fields. */
export const MUTABLE_COLUMNS: readonly Column<TrialChange>[] = [
  m('state', 'state', 'text', 'TEXT', 'text'),
  m('client_id', 'clientId', 'text', 'TEXT', 'text'),
  m('lease_expires_at', 'leaseExpiresAt', 'text', 'TEXT', 'text'),
  { name: 'outcome', kind: 'json', sqlite: 'TEXT', postgres: 'json', get: outcomeOf, fields: OUTCOME_FIELDS, object: true },
  m('failure_reason', 'failureReason', 'text', 'TEXT', 'text'),
  m('late', 'late', 'boolean', 'INTEGER', 'boolean'),
  m('completed_at', 'completedAt', 'text', 'TEXT', 'text'),
  m('updated_at', 'updatedAt', 'text', 'TEXT', 'text'),
];

const mutable = (name: string) => MUTABLE_COLUMNS.find((c) => c.name === name)! as Column<TrialRecord>;

/** Every column, in the order of TrialRecord's fields (a record read from a row has its fields in that order). */
export const TRIAL_COLUMNS: readonly Column<TrialRecord>[] = [
  f('study_id', 'studyId', 'text', 'TEXT', 'text'),
  f('trial_id', 'trialId', 'integer', 'INTEGER', 'integer'),
  mutable('state'),
  f('generation', 'generation', 'integer', 'INTEGER', 'integer'),
  mutable('client_id'),
  mutable('lease_expires_at'),
  f('parameters', 'parameters', 'json', 'TEXT', 'json'),
  f('point', 'point', 'json', 'TEXT', 'json'),
  mutable('outcome'),
  mutable('failure_reason'),
  mutable('late'),
  f('source', 'source', 'text', 'TEXT', 'text'),
  f('created_at', 'createdAt', 'text', 'TEXT', 'text'),
  mutable('completed_at'),
  mutable('updated_at'),
];

/**
 * The row reader, compiled once from the list: one object literal with the record's fields in
 * TRIAL_COLUMNS' order. Every read of a trial goes through it (a study's history is hundreds of
 * rows per engine update); a loop over the columns took three times as long per row (1.43 against
 * 0.50 µs, best of 15 × 200,000 rows; the hand-written reader before the outcome column: 0.31 µs,
 * the difference mostly the outcome's JSON.parse). Its source holds only the names above, never input.
 */
const readRow = (() => {
  const lines: string[] = [];
  const fields: string[] = [];
  const optional: string[] = [];
  TRIAL_COLUMNS.forEach((c, i) => {
    const raw = `r[${JSON.stringify(c.name)}]`;
    const decoded = c.kind === 'json' ? `json(${raw})` : c.kind === 'boolean' ? `bool(${raw})` : raw;
    lines.push(`const v${i} = ${raw} === null || ${raw} === undefined ? null : ${decoded};`);
    if (c.object) {
      for (const f of c.fields) {
        const member = `v${i}[${JSON.stringify(f)}]`;
        if (OPTIONAL_FIELDS.has(f)) optional.push(`if (v${i} !== null && ${member} !== undefined && ${member} !== null) t.${f} = ${member};`);
        else fields.push(`${f}: v${i} === null ? null : (${member} ?? null)`);
      }
    } else fields.push(`${c.fields[0]}: v${i}`);
  });
  return new Function('r', 'json', 'bool', `${lines.join('\n')}\nconst t = { ${fields.join(', ')} };\n${optional.join('\n')}\nreturn t;`) as (r: object, json: (v: unknown) => JsonValue, bool: (v: unknown) => boolean) => TrialRecord;
})();

/** A trials row as a driver returns it (SELECT *, or a row inside json_agg), to the record. */
export function trialFromRow<J, B>(row: object, c: Columns<J, B>): TrialRecord {
  return readRow(row, c.json as (v: unknown) => JsonValue, c.bool as (v: unknown) => boolean);
}

/** better-sqlite3's parameters for these columns of a record, by column name: JSON as text, booleans as 0 or 1. */
function sqliteValues<R>(cols: readonly Column<R>[], r: R): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of cols) {
    const v = c.get(r);
    out[c.name] = v === null ? null : c.kind === 'json' ? JSON.stringify(v) : c.kind === 'boolean' ? (v ? 1 : 0) : v;
  }
  return out;
}

/** The columns of a record as one object of a JSON document that json_to_recordset reads (PostgreSQL). */
function jsonValues<R>(cols: readonly Column<R>[], r: R): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const c of cols) out[c.name] = c.get(r);
  return out;
}

/** SQLite: the insert of one whole trial (named parameters from sqliteTrial). */
export const SQLITE_INSERT_TRIAL = `INSERT INTO trials (${TRIAL_COLUMNS.map((c) => c.name).join(', ')}) VALUES (${TRIAL_COLUMNS.map((c) => `@${c.name}`).join(', ')})`;
export const sqliteTrial = (r: TrialRecord) => sqliteValues(TRIAL_COLUMNS, r);

/** SQLite: the guarded update of one trial (named parameters from sqliteTrialUpdate); changes nothing unless the trial is still in @expected_state. */
export const SQLITE_UPDATE_TRIAL = `UPDATE trials SET ${MUTABLE_COLUMNS.map((c) => `${c.name} = @${c.name}`).join(', ')}
  WHERE study_id = @study_id AND trial_id = @trial_id AND state = @expected_state`;
export function sqliteTrialUpdate(studyId: string, trialId: number, expectedState: TrialState, change: TrialChange): Record<string, unknown> {
  return { ...sqliteValues(MUTABLE_COLUMNS, change), study_id: studyId, trial_id: trialId, expected_state: expectedState };
}

const recordsetColumns = (cols: readonly Column<never>[]) => cols.map((c) => `${c.name} ${c.postgres}`).join(', ');
const names = (cols: readonly Column<never>[]) => cols.map((c) => c.name).join(', ');

/**
 * PostgreSQL: inserts the trials of a JSON array parameter (`param`, e.g. '$1'; rows from pgTrial),
 * as `x`. `from` adds to the FROM clause (a join) and `trialId` replaces x.trial_id (an offset, say).
 */
export function pgInsertTrials(param: string, opts: { from?: string; trialId?: string } = {}): string {
  const values = TRIAL_COLUMNS.map((c) => (c.name === 'trial_id' && opts.trialId ? opts.trialId : `x.${c.name}`)).join(', ');
  return `INSERT INTO trials (${names(TRIAL_COLUMNS)}) SELECT ${values} FROM json_to_recordset(${param}) AS x(${recordsetColumns(TRIAL_COLUMNS)})${opts.from ?? ''}`;
}
export const pgTrial = (r: TrialRecord) => jsonValues(TRIAL_COLUMNS, r);

/**
 * PostgreSQL: the guarded updates of a JSON array parameter (rows from pgTrialUpdate), as `x`, each
 * applied only if its trial is still in expected_state; `from` adds to the FROM clause (a join).
 */
export function pgUpdateTrials(param: string, from = ''): string {
  return `UPDATE trials t SET ${MUTABLE_COLUMNS.map((c) => `${c.name} = x.${c.name}`).join(', ')}
    FROM json_to_recordset(${param}) AS x(study_id text, trial_id integer, expected_state text, ${recordsetColumns(MUTABLE_COLUMNS)})${from}
    WHERE t.study_id = x.study_id AND t.trial_id = x.trial_id AND t.state = x.expected_state`;
}
export function pgTrialUpdate(studyId: string, trialId: number, expectedState: TrialState, change: TrialChange): Record<string, JsonValue> {
  return { ...jsonValues(MUTABLE_COLUMNS, change), study_id: studyId, trial_id: trialId, expected_state: expectedState };
}
