/** All SQL for intermediate values (early stopping): one value per trial and step, never overwritten. */
import type { SqliteDatabase } from './connection.js';
import type { IntermediateRecord, StepPeer } from '../storage.js';
import { intermediateFromRow, type IntermediateRow } from '../rows.js';

export class IntermediateRepo {
  private readonly insertStmt;
  private readonly oneStmt;
  private readonly allStmt;
  private readonly peersStmt;
  private readonly recordTx;

  constructor(private readonly db: SqliteDatabase) {
    this.insertStmt = db.prepare(`
      INSERT INTO intermediate_values (study_id, trial_id, step, value, created_at)
      VALUES (@study_id, @trial_id, @step, @value, @created_at) ON CONFLICT DO NOTHING`);
    this.oneStmt = db.prepare<[string, number, number], IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = ? AND trial_id = ? AND step = ?');
    this.allStmt = db.prepare<[string], IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = ? ORDER BY trial_id, step');
    this.peersStmt = db.prepare<[number, string], { trial_id: number; failure_reason: string | null; value: number | null }>(`
      SELECT t.trial_id, t.failure_reason, i.value FROM trials t
        LEFT JOIN intermediate_values i ON i.study_id = t.study_id AND i.trial_id = t.trial_id AND i.step = ?
      WHERE t.study_id = ? AND t.state = 'COMPLETED' ORDER BY t.trial_id`);
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

  peers(studyId: string, step: number): StepPeer[] {
    return this.peersStmt.all(step, studyId).map((r) => ({ trialId: r.trial_id, failureReason: r.failure_reason, value: r.value }));
  }

  /** Inside the import's transaction. */
  insertAll(studyId: string, records: readonly IntermediateRecord[]): void {
    for (const r of records) this.insertStmt.run({ study_id: studyId, trial_id: r.trialId, step: r.step, value: r.value, created_at: r.createdAt });
  }
}
