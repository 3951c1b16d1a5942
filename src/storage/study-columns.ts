/**
 * The studies table, listed once. Every study insert (a new study, an import), every update (a
 * PATCH) and every row read, on SQLite and on PostgreSQL, is built from this list: a column's name,
 * its SQL type in each database, the field of the record it holds, and how a study becomes the
 * column's value and back. A new study setting stored as a column is one entry here, its field in
 * the record types (storage.ts) and a migration in each database (test/storage/study-columns.test.ts
 * checks the list against both schemas).
 *
 * The drivers differ only in how a JSON column travels: better-sqlite3 takes and returns it as text;
 * node-postgres returns it parsed and is sent JSON text (an array would go as a PostgreSQL array).
 * The studies table has no boolean.
 */
import { TRIAL_STATES, type ImportedStudy, type JsonValue, type NewStudyRecord, type StudyPatch, type StudyRecord, type TrialCounts, type TrialState } from './storage.js';
import type { Columns } from './rows.js';

type Kind = 'text' | 'integer' | 'real' | 'json';

interface Column {
  /** The SQL column. */
  readonly name: string;
  readonly kind: Kind;
  /** Its declared type in each database, as the migrations created it. */
  readonly sqlite: string;
  readonly postgres: string;
  /**
   * The record's field the column holds. None for the storage's own columns, which no record
   * carries: `seq` (the listing's cursor, numbered by the database), `next_trial_id` and
   * `commit_seq` (written by the loop's commit and by an import; commit-plan.ts).
   */
  readonly field?: keyof StudyRecord & keyof ImportedStudy;
  /** The column's value for a study being written (created or imported): a JSON column's JSON value, null for SQL NULL. */
  readonly get?: (s: ImportedStudy) => JsonValue;
  /** The field's value when the column is NULL, or absent (a row of a schema before the migration that added it). Default null. */
  readonly absent?: JsonValue;
  /**
   * Written by an insert only when the study has a value (not null): without one, the insert is
   * the statement of the releases before the migration that added the column, which the migration
   * tests run on the schemas of those releases. For a column added by a later migration.
   */
  readonly whenSet?: true;
  /** A field of StudyPatch: an update changes the column when the patch has the field. */
  readonly patch?: true;
}

type Field = keyof StudyRecord & keyof ImportedStudy;

/** A column holding one field of the study as it is. */
function field(name: string, key: Field, kind: Kind, sqlite: string, postgres: string, opts: Pick<Column, 'get' | 'absent' | 'whenSet' | 'patch'> = {}): Column {
  return { name, kind, sqlite, postgres, field: key, get: (s) => s[key] as JsonValue, ...opts };
}

/** A column of the storage's own, no field of a record. */
const own = (name: string, sqlite: string, postgres: string): Column => ({ name, kind: 'integer', sqlite, postgres });

/**
 * Every column. The record's fields read from a row are in this order (trialCounts, from the
 * study_trial_counts table, after them).
 */
export const STUDY_COLUMNS: readonly Column[] = [
  own('seq', 'INTEGER', 'bigint'),
  field('id', 'id', 'text', 'TEXT', 'text'),
  field('tenant_id', 'tenantId', 'text', 'TEXT', 'text'),
  field('name', 'name', 'text', 'TEXT', 'text', { patch: true }),
  field('direction', 'direction', 'text', 'TEXT', 'text'),
  field('parameters', 'parameters', 'json', 'TEXT', 'json'),
  field('prior', 'prior', 'json', 'TEXT', 'json'),
  field('method', 'method', 'text', 'TEXT', 'text'),
  field('batch_size', 'batchSize', 'integer', 'INTEGER', 'integer'),
  field('options', 'options', 'json', 'TEXT', 'json'),
  field('seed', 'seed', 'integer', 'INTEGER', 'bigint'),
  field('max_trials', 'maxTrials', 'integer', 'INTEGER', 'integer'),
  field('lease_seconds', 'leaseSeconds', 'integer', 'INTEGER', 'integer'),
  field('known_optimum', 'knownOptimum', 'real', 'REAL', 'double precision'),
  field('metadata', 'metadata', 'json', 'TEXT', 'json', { patch: true }),
  field('state', 'state', 'text', 'TEXT', 'text', { patch: true }),
  field('reason', 'reason', 'text', 'TEXT', 'text', { patch: true }),
  field('generation', 'generation', 'integer', 'INTEGER', 'integer'),
  field('created_at', 'createdAt', 'text', 'TEXT', 'text'),
  field('updated_at', 'updatedAt', 'text', 'TEXT', 'text', { patch: true }),
  // Migration 007 (SQLite) / 006 (PostgreSQL): NOT NULL DEFAULT '{}', always written.
  field('loop_settings', 'loopSettings', 'json', 'TEXT', 'json', { get: (s) => s.loopSettings ?? {}, absent: {} }),
  // Migration 010 (both).
  field('outcomes', 'outcomes', 'json', 'TEXT', 'json', { get: (s) => s.outcomes ?? null, whenSet: true }),
  own('next_trial_id', 'INTEGER', 'integer'),
  own('commit_seq', 'INTEGER', 'bigint'),
];

type Written = Column & Required<Pick<Column, 'field' | 'get'>>;
const WRITTEN = STUDY_COLUMNS.filter((c): c is Written => c.field !== undefined);
const PATCHED = WRITTEN.filter((c) => c.patch);

/** A new study as written by createStudy: generation 0, updated when created. */
export const createdStudy = (s: NewStudyRecord): ImportedStudy => ({ ...s, generation: 0, updatedAt: s.createdAt });

/**
 * The row reader, compiled once from the list (as trial-columns.ts's): one object literal with the
 * record's fields in STUDY_COLUMNS' order. Its source holds only the names above, never input.
 */
const readRow = (() => {
  const fields = WRITTEN.map((c) => {
    const raw = `r[${JSON.stringify(c.name)}]`;
    // A JSON literal in the source: a fresh object at every read.
    return `${JSON.stringify(c.field)}: ${raw} === null || ${raw} === undefined ? ${JSON.stringify(c.absent ?? null)} : ${c.kind === 'json' ? `json(${raw})` : raw}`;
  });
  return new Function('r', 'json', 'trialCounts', `return { ${fields.join(', ')}, trialCounts };`) as (r: object, json: (v: unknown) => JsonValue, trialCounts: TrialCounts) => StudyRecord;
})();

/**
 * A studies row as a driver returns it (SELECT *, or row_to_json) to the record. `counts`: trials by
 * state as the study_trial_counts table keeps them (a state without trials may be absent).
 */
export function studyFromRow<J>(row: object, counts: Partial<Record<TrialState, number>> | null, c: Pick<Columns<J, unknown>, 'json'>): StudyRecord {
  const trialCounts = Object.fromEntries(TRIAL_STATES.map((st) => [st, counts?.[st] ?? 0])) as TrialCounts;
  return readRow(row, c.json as (v: unknown) => JsonValue, trialCounts);
}

/** The columns an insert of this study writes, with their values: all but a `whenSet` column without one. */
function written(s: ImportedStudy): [Written, JsonValue][] {
  const out: [Written, JsonValue][] = [];
  for (const c of WRITTEN) {
    const v = c.get(s);
    if (v !== null || !c.whenSet) out.push([c, v]);
  }
  return out;
}

/** The columns a patch changes (those of its fields that are not undefined), with their values. */
function patched(p: StudyPatch): [Written, JsonValue][] {
  const out: [Written, JsonValue][] = [];
  for (const c of PATCHED) {
    const v = p[c.field as keyof StudyPatch];
    if (v !== undefined) out.push([c, v as JsonValue]);
  }
  return out;
}

/**
 * A column's parameter, the same for both drivers: a JSON column as its text (better-sqlite3 stores
 * text; node-postgres would send a JS array as a PostgreSQL array, not JSON).
 */
const param = (c: Column, v: JsonValue | undefined): unknown => (v === null || v === undefined ? null : c.kind === 'json' ? JSON.stringify(v) : v);

/** SQLite: the insert of one study (created: createdStudy, or imported) and its named parameters. */
export function sqliteInsertStudy(s: ImportedStudy): { sql: string; params: Record<string, unknown> } {
  const cols = written(s);
  return {
    sql: `INSERT INTO studies (${cols.map(([c]) => c.name).join(', ')}) VALUES (${cols.map(([c]) => `@${c.name}`).join(', ')})`,
    params: Object.fromEntries(cols.map(([c, v]) => [c.name, param(c, v)])),
  };
}

/** SQLite: the SET clauses of a patch (named parameters, none of them `tenant_id` or `id`) and their parameters. */
export function sqliteStudyUpdate(p: StudyPatch): { sets: string[]; params: Record<string, unknown> } {
  const cols = patched(p);
  return { sets: cols.map(([c]) => `${c.name} = @${c.name}`), params: Object.fromEntries(cols.map(([c, v]) => [c.name, param(c, v)])) };
}

/** PostgreSQL: the insert of one study (created: createdStudy, or imported) and its parameters ($1, $2, …). */
export function pgInsertStudy(s: ImportedStudy): { text: string; values: unknown[] } {
  const cols = written(s);
  return {
    text: `INSERT INTO studies (${cols.map(([c]) => c.name).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
    values: cols.map(([c, v]) => param(c, v)),
  };
}

/** PostgreSQL: the SET clauses of a patch, each with its parameter appended to `values` (its placeholder numbered after those already there). */
export function pgStudyUpdate(p: StudyPatch, values: unknown[]): string[] {
  return patched(p).map(([c, v]) => {
    values.push(param(c, v));
    return `${c.name} = $${values.length}`;
  });
}
