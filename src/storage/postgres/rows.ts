/** Rows as node-postgres returns them (json columns already parsed, int8 as numbers) to storage records (../rows.ts). */
import { engineStateFromRow, type Columns, type EngineStateRow as Engine } from '../rows.js';
import { studyFromRow } from '../study-columns.js';
import { trialFromRow } from '../trial-columns.js';
import type { EvaluationRecord, JsonValue, KeyedEvaluation, TrialState } from '../storage.js';

export { keyFromRow as toKey, type KeyRow } from '../rows.js';

const columns: Columns<JsonValue, boolean> = { json: (v) => v, bool: (v) => v };

/** A studies row as the driver returns it (columns: study-columns.ts), with its trial counts. */
export type StudyRow = { seq: number; next_trial_id: number; commit_seq: number } & Record<string, unknown> & {
  /** From the query: { state: n } of study_trial_counts, or null when the study has no trials. */
  counts: Partial<Record<TrialState, number>> | null;
};
/** A trials row as the driver returns it (columns: trial-columns.ts). */
export type TrialRow = { trial_id: number } & Record<string, unknown>;
export type EngineStateRow = Engine<JsonValue>;

/** The counts subquery every study read appends (kept by triggers, a few rows per study). */
export const COUNTS_SQL = '(SELECT json_object_agg(c.state, c.n) FROM study_trial_counts c WHERE c.study_id = s.id) AS counts';

export const toStudy = (r: StudyRow) => studyFromRow(r, r.counts, columns);
export const toTrial = (r: TrialRow) => trialFromRow(r, columns);
export const toEngineState = (r: EngineStateRow) => engineStateFromRow(r, columns);

/** JSON text for a json parameter (node-postgres would send a JS array as a PostgreSQL array, not JSON). */
export const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/** A study_evaluations row (migration 005; computed by the domain, written by the commit) and its record. */
export interface EvaluationRow {
  idx: number;
  trial_id: number;
  value: number;
  best_so_far: number;
  improved: boolean;
}
export const EVALUATION_COLUMNS = 'idx, trial_id, value, best_so_far, improved';
export const toEvaluation = (r: EvaluationRow): EvaluationRecord => ({ index: r.idx, trialId: r.trial_id, value: r.value, bestSoFar: r.best_so_far, improved: r.improved });
export type KeyedRow = EvaluationRow & { completed_at: string };
export const toKeyed = (r: KeyedRow): KeyedEvaluation => ({ completedAt: r.completed_at, ...toEvaluation(r) });
