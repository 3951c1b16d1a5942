/** All SQL for intermediate values (early stopping): one value per trial and step, never overwritten. */
import type { SqliteDatabase } from './connection.js';
import type { IntermediateCursor, IntermediateRecord, StepPeer } from '../storage.js';
import { intermediateFromRow, type IntermediateRow } from '../rows.js';

export class IntermediateRepo {
  private readonly insertStmt;
  private readonly oneStmt;
  private readonly allStmt;
  private readonly pageStmt;
  private readonly peersStmt;
  private readonly countStmt;
  private readonly rangeStmt;
  private readonly recordTx;

  constructor(private readonly db: SqliteDatabase) {
    this.insertStmt = db.prepare(`
      INSERT INTO intermediate_values (study_id, trial_id, step, value, created_at)
      VALUES (@study_id, @trial_id, @step, @value, @created_at) ON CONFLICT DO NOTHING`);
    this.oneStmt = db.prepare<[string, number, number], IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = ? AND trial_id = ? AND step = ?');
    this.allStmt = db.prepare<[string], IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = ? ORDER BY trial_id, step');
    // A range of the primary key from the cursor: (trial_id, step) > (a, b) is one index seek.
    this.pageStmt = db.prepare<[string, number, number, number], IntermediateRow>(
      'SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = ? AND (trial_id, step) > (?, ?) ORDER BY trial_id, step LIMIT ?',
    );
    // From the (study, step) index (whose entries end with the trial id, so already in trial-id
    // order), each joined to its trial by primary key. Without INDEXED BY, SQLite's planner (no
    // statistics) walks the primary key, i.e. every value of the study.
    this.peersStmt = db.prepare<[string, number], { trial_id: number; failure_reason: string | null; value: number }>(`
      SELECT i.trial_id, t.failure_reason, i.value FROM intermediate_values i INDEXED BY intermediate_values_step
        JOIN trials t ON t.study_id = i.study_id AND t.trial_id = i.trial_id
      WHERE i.study_id = ? AND i.step = ? AND t.state = 'COMPLETED' ORDER BY i.trial_id`);
    this.countStmt = db.prepare<[string, string, number], { n: number }>(`
      SELECT count(*) AS n FROM (SELECT 1 FROM trials INDEXED BY trials_study_state_id
        WHERE study_id = ? AND state = 'COMPLETED' AND failure_reason IS NOT ? LIMIT ?)`);
    this.rangeStmt = db.prepare<[string, number, number], { lo: number | null; hi: number | null }>(
      'SELECT min(value) AS lo, max(value) AS hi FROM intermediate_values WHERE study_id = ? AND trial_id = ? AND step <= ?',
    );
    this.recordTx = db.transaction((studyId: string, r: IntermediateRecord) => {
      const res = this.insertStmt.run({ study_id: studyId, trial_id: r.trialId, step: r.step, value: r.value, created_at: r.createdAt });
      if (res.changes > 0) return { inserted: true, record: { ...r } };
      return { inserted: false, record: intermediateFromRow(this.oneStmt.get(studyId, r.trialId, r.step)!) };
    });
  }

  record(studyId: string, r: IntermediateRecord): { inserted: boolean; record: IntermediateRecord } {
    return this.recordTx.immediate(studyId, r);
  }

  list(studyId: string, trialIds?: readonly number[]): IntermediateRecord[] {
    if (trialIds === undefined) return this.allStmt.all(studyId).map(intermediateFromRow);
    if (trialIds.length === 0) return [];
    const ids = JSON.stringify(trialIds.map(Number));
    return this.db
      .prepare<[string, string], IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = ? AND trial_id IN (SELECT value FROM json_each(?)) ORDER BY trial_id, step')
      .all(studyId, ids)
      .map(intermediateFromRow);
  }

  page(studyId: string, q: { after: IntermediateCursor | null; limit: number }): IntermediateRecord[] {
    const after = q.after ?? { trialId: 0, step: -1 };
    return this.pageStmt.all(studyId, after.trialId, after.step, q.limit).map(intermediateFromRow);
  }

  peers(studyId: string, step: number): StepPeer[] {
    return this.peersStmt.all(studyId, step).map((r) => ({ trialId: r.trial_id, failureReason: r.failure_reason, value: r.value }));
  }

  countCompleted(studyId: string, q: { exceptFailureReason: string; atMost: number }): number {
    return this.countStmt.get(studyId, q.exceptFailureReason, q.atMost)!.n;
  }

  range(studyId: string, trialId: number, throughStep: number): { min: number; max: number } | null {
    const r = this.rangeStmt.get(studyId, trialId, throughStep)!;
    return r.lo === null || r.hi === null ? null : { min: r.lo, max: r.hi };
  }

  /** Inside the import's transaction. */
  insertAll(studyId: string, records: readonly IntermediateRecord[]): void {
    for (const r of records) this.insertStmt.run({ study_id: studyId, trial_id: r.trialId, step: r.step, value: r.value, created_at: r.createdAt });
  }
}
