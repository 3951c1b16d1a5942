/** Intermediate values on PostgreSQL (IntermediateStore): one row per trial and step, read by ranges of its keys. */
import {
  type IntermediateCursor,
  type IntermediateRecord,
  type StepPeer,
} from '../storage.js';
import type { PgDb } from './db.js';
import { intermediateFromRow, type IntermediateRow } from '../rows.js';

/** Intermediate values as parallel arrays for one INSERT ... SELECT FROM unnest; a step already stored is left as it is. */
export const INSERT_INTERMEDIATE = `INSERT INTO intermediate_values (study_id, trial_id, step, value, created_at)
  SELECT $1, u.* FROM unnest($2::int[], $3::int[], $4::float8[], $5::text[]) AS u ON CONFLICT DO NOTHING`;

export function intermediateColumns(studyId: string, records: readonly IntermediateRecord[]): unknown[] {
  return [studyId, records.map((r) => r.trialId), records.map((r) => r.step), records.map((r) => r.value), records.map((r) => r.createdAt)];
}

export class IntermediateRepo {
  constructor(private readonly db: PgDb) {}

  async recordIntermediate(studyId: string, r: IntermediateRecord): Promise<{ inserted: boolean; record: IntermediateRecord }> {
    // One statement: the insert, or the row that was there (an autocommitted statement is durable when it returns).
    const [row] = await this.db.rows<IntermediateRow & { inserted: boolean }>(
      `WITH ins AS (${INSERT_INTERMEDIATE} RETURNING trial_id, step, value, created_at)
       SELECT trial_id, step, value, created_at, true AS inserted FROM ins
       UNION ALL SELECT trial_id, step, value, created_at, false FROM intermediate_values
         WHERE study_id = $1 AND trial_id = $2[1] AND step = $3[1] AND NOT EXISTS (SELECT 1 FROM ins)`,
      intermediateColumns(studyId, [r]),
    );
    if (row) return { inserted: row.inserted, record: intermediateFromRow(row) };
    // The conflicting row was written by a transaction that committed after this statement's snapshot: read it now.
    const [again] = await this.db.rows<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 AND trial_id = $2 AND step = $3', [studyId, r.trialId, r.step]);
    return { inserted: false, record: intermediateFromRow(again!) };
  }

  async listIntermediate(studyId: string, trialIds?: readonly number[]): Promise<IntermediateRecord[]> {
    const rows =
      trialIds === undefined
        ? await this.db.rows<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 ORDER BY trial_id, step', [studyId])
        : await this.db.rows<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 AND trial_id = ANY($2::int[]) ORDER BY trial_id, step', [studyId, [...trialIds]]);
    return rows.map(intermediateFromRow);
  }

  async listIntermediatePage(studyId: string, q: { after: IntermediateCursor | null; limit: number }): Promise<IntermediateRecord[]> {
    const after = q.after ?? { trialId: 0, step: -1 };
    // A row comparison on the primary key's columns: one index range from the cursor.
    const rows = await this.db.rows<IntermediateRow>(
      'SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 AND (trial_id, step) > ($2, $3) ORDER BY trial_id, step LIMIT $4',
      [studyId, after.trialId, after.step, q.limit],
    );
    return rows.map(intermediateFromRow);
  }

  async stepPeers(studyId: string, step: number): Promise<StepPeer[]> {
    // From the (study, step) index, each value joined to its trial by primary key.
    const rows = await this.db.rows<{ trial_id: number; failure_reason: string | null; value: number }>(
      `SELECT i.trial_id, t.failure_reason, i.value FROM intermediate_values i
         JOIN trials t ON t.study_id = i.study_id AND t.trial_id = i.trial_id
       WHERE i.study_id = $1 AND i.step = $2 AND t.state = 'COMPLETED' ORDER BY i.trial_id`,
      [studyId, step],
    );
    return rows.map((r) => ({ trialId: r.trial_id, failureReason: r.failure_reason, value: r.value }));
  }

  async countCompleted(studyId: string, q: { exceptFailureReason: string; atMost: number }): Promise<number> {
    const [row] = await this.db.rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM trials
         WHERE study_id = $1 AND state = 'COMPLETED' AND failure_reason IS DISTINCT FROM $2 LIMIT $3) c`,
      [studyId, q.exceptFailureReason, q.atMost],
    );
    return row!.n;
  }

  async intermediateRange(studyId: string, trialId: number, throughStep: number): Promise<{ min: number; max: number } | null> {
    const [row] = await this.db.rows<{ lo: number | null; hi: number | null }>(
      'SELECT min(value) AS lo, max(value) AS hi FROM intermediate_values WHERE study_id = $1 AND trial_id = $2 AND step <= $3',
      [studyId, trialId, throughStep],
    );
    return row!.lo === null || row!.hi === null ? null : { min: row!.lo, max: row!.hi };
  }
}
