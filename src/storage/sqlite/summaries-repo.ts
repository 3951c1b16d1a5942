/**
 * The read side's O(page) queries: evaluations in completion order with their best so far (table
 * study_evaluations of migration 006, whose rows the domain computes and the commit writes), engine
 * states by generation pages, and
 * the expired leases that reads show as REQUESTED. Synchronous (better-sqlite3); SqliteStorage
 * wraps it in Promises.
 */
import type { SqliteDatabase } from './connection.js';
import type { EngineStateRecord, EvaluationRecord, EvaluationsAround, EvaluationSummary, KeyedEvaluation } from '../storage.js';
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

const toKeyed = (r: EvaluationRow & { completed_at: string }): KeyedEvaluation => ({ completedAt: r.completed_at, ...toEvaluation(r) });

/**
 * Writes evaluation rows as the domain computed them, inside the caller's transaction (a commit, an
 * import): a new row is inserted, a row whose position or best so far moved (a result placed before
 * it) is replaced.
 */
export function evaluationWriter(db: SqliteDatabase): (studyId: string, rows: readonly KeyedEvaluation[]) => void {
  const upsert = db.prepare<[string, string, number, number, number, number, number]>(`
    INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (study_id, completed_at, trial_id) DO UPDATE SET idx = excluded.idx, value = excluded.value,
      best_so_far = excluded.best_so_far, improved = excluded.improved`);
  return (studyId, rows) => {
    for (const r of rows) upsert.run(studyId, r.completedAt, r.trialId, r.index, r.value, r.bestSoFar, r.improved ? 1 : 0);
  };
}

export class SummariesRepo {
  private readonly countStmt;
  private readonly bestStmt;
  private readonly pageStmt;
  private readonly atStmt;
  private readonly stepsStmt;
  private readonly statesStmt;
  private readonly lastStmt;
  private readonly beforeStmt;
  private readonly fromStmt;
  private readonly aroundTx;

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
    type Keyed = EvaluationRow & { completed_at: string };
    this.lastStmt = db.prepare<[string], Keyed>(`SELECT completed_at, ${COLUMNS} FROM study_evaluations WHERE study_id = ? ORDER BY idx DESC LIMIT 1`);
    // Along the primary key (study, completed_at, trial id) from the key, backwards and forwards.
    this.beforeStmt = db.prepare<[string, string, number], Keyed>(
      `SELECT completed_at, ${COLUMNS} FROM study_evaluations WHERE study_id = ? AND (completed_at, trial_id) < (?, ?) ORDER BY completed_at DESC, trial_id DESC LIMIT 1`,
    );
    this.fromStmt = db.prepare<[string, string, number], Keyed>(
      `SELECT completed_at, ${COLUMNS} FROM study_evaluations WHERE study_id = ? AND (completed_at, trial_id) >= (?, ?) ORDER BY completed_at, trial_id`,
    );
    this.aroundTx = db.transaction((studyId: string, key: { completedAt: string; trialId: number }): EvaluationsAround => {
      const before = this.beforeStmt.get(studyId, key.completedAt, key.trialId);
      return { before: before ? toKeyed(before) : null, after: this.fromStmt.all(studyId, key.completedAt, key.trialId).map(toKeyed) };
    });
  }

  summary(studyId: string): EvaluationSummary {
    const best = this.bestStmt.get(studyId);
    return { count: this.countStmt.get(studyId)?.n ?? 0, best: best ? toEvaluation(best) : null };
  }

  /** The last evaluation in completion order (one seek of study_evaluations_idx). */
  last(studyId: string): KeyedEvaluation | null {
    const r = this.lastStmt.get(studyId);
    return r ? toKeyed(r) : null;
  }

  around(studyId: string, key: { completedAt: string; trialId: number }): EvaluationsAround {
    return this.aroundTx.deferred(studyId, key);
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
