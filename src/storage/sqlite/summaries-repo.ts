/**
 * The read side's O(page) queries: evaluations in completion order with their best so far (table
 * study_evaluations, kept by the triggers of migration 006), engine states by generation pages, and
 * the expired leases that reads show as REQUESTED. Synchronous (better-sqlite3); SqliteStorage
 * wraps it in Promises.
 */
import type { SqliteDatabase } from './connection.js';
import type { EngineStateRecord, EvaluationRecord, EvaluationSummary } from '../storage.js';
import { toEngineState, type EngineStateRow } from './rows.js';

interface EvaluationRow {
  idx: number;
  trial_id: number;
  value: number;
  best_so_far: number;
  improved: number;
}

const COLUMNS = 'idx, trial_id, value, best_so_far, improved';

function toEvaluation(r: EvaluationRow): EvaluationRecord {
  return { index: r.idx, trialId: r.trial_id, value: r.value, bestSoFar: r.best_so_far, improved: r.improved === 1 };
}

export class SummariesRepo {
  private readonly countStmt;
  private readonly bestStmt;
  private readonly pageStmt;
  private readonly atStmt;
  private readonly stepsStmt;
  private readonly statesStmt;

  constructor(private readonly db: SqliteDatabase) {
    // MAX over the (study_id, idx) index and the last step over the partial index: one seek each.
    this.countStmt = db.prepare<[string], { n: number | null }>('SELECT MAX(idx) AS n FROM study_evaluations WHERE study_id = ?');
    this.bestStmt = db.prepare<[string], EvaluationRow>(`SELECT ${COLUMNS} FROM study_evaluations WHERE study_id = ? AND improved = 1 ORDER BY idx DESC LIMIT 1`);
    this.pageStmt = db.prepare<[string, number, number], EvaluationRow>(`SELECT ${COLUMNS} FROM study_evaluations WHERE study_id = ? AND idx > ? ORDER BY idx LIMIT ?`);
    this.atStmt = db.prepare<[string, string], EvaluationRow>(`SELECT ${COLUMNS} FROM study_evaluations WHERE study_id = ? AND idx IN (SELECT value FROM json_each(?)) ORDER BY idx`);
    this.stepsStmt = db.prepare<[string, number, number, number], EvaluationRow>(
      `SELECT ${COLUMNS} FROM study_evaluations WHERE study_id = ? AND improved = 1 AND idx > ? AND idx <= ? ORDER BY idx LIMIT ?`,
    );
    this.statesStmt = db.prepare<[string, number, number], EngineStateRow>('SELECT * FROM engine_states WHERE study_id = ? AND generation > ? ORDER BY generation LIMIT ?');
  }

  summary(studyId: string): EvaluationSummary {
    const best = this.bestStmt.get(studyId);
    return { count: this.countStmt.get(studyId)?.n ?? 0, best: best ? toEvaluation(best) : null };
  }

  page(studyId: string, q: { afterIndex: number; limit: number }): EvaluationRecord[] {
    return this.pageStmt.all(studyId, q.afterIndex, q.limit).map(toEvaluation);
  }

  at(studyId: string, indices: readonly number[]): EvaluationRecord[] {
    return indices.length === 0 ? [] : this.atStmt.all(studyId, JSON.stringify(indices)).map(toEvaluation);
  }

  steps(studyId: string, q: { afterIndex: number; throughIndex: number; limit: number }): EvaluationRecord[] {
    return this.stepsStmt.all(studyId, q.afterIndex, q.throughIndex, q.limit).map(toEvaluation);
  }

  engineStates(studyId: string, q: { afterGeneration: number; limit: number }): EngineStateRecord[] {
    return this.statesStmt.all(studyId, q.afterGeneration, q.limit).map(toEngineState);
  }

  expiredLeases(studyIds: readonly string[], now: string): Record<string, number> {
    if (studyIds.length === 0) return {};
    // Through trials_study_state_id: only the ACTIVE rows of these studies are visited.
    const rows = this.db
      .prepare<[string, string], { study_id: string; n: number }>(
        "SELECT study_id, COUNT(*) AS n FROM trials WHERE study_id IN (SELECT value FROM json_each(?)) AND state = 'ACTIVE' AND lease_expires_at <= ? GROUP BY study_id",
      )
      .all(JSON.stringify(studyIds), now);
    return Object.fromEntries(rows.map((r) => [r.study_id, r.n]));
  }
}
