/** The read side's O(page) summaries on PostgreSQL (SummariesStore): evaluations and best-so-far steps (study_evaluations), engine-state pages, lease and server counts. */
import {
  STUDY_STATES,
  type EngineStateRecord,
  type EvaluationRecord,
  type EvaluationsAround,
  type EvaluationSummary,
  type OperationalCounts,
  type StudyState,
} from '../storage.js';
import type { PgDb } from './db.js';
import { toEngineState, type EngineStateRow, EVALUATION_COLUMNS, toEvaluation, toKeyed, type EvaluationRow, type KeyedRow } from './rows.js';


export class SummariesRepo {
  constructor(private readonly db: PgDb) {}

  async evaluationSummary(studyId: string): Promise<EvaluationSummary> {
    const [row] = await this.db.rows<{ n: number | null; best: EvaluationRow | null }>(
      `SELECT (SELECT MAX(idx) FROM study_evaluations WHERE study_id = $1) AS n,
        (SELECT row_to_json(e) FROM (SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND improved ORDER BY idx DESC LIMIT 1) e) AS best`,
      [studyId],
    );
    return { count: row?.n ?? 0, best: row?.best ? toEvaluation(row.best) : null };
  }

  async evaluationsAround(studyId: string, key: { completedAt: string; trialId: number }): Promise<EvaluationsAround> {
    // One statement, so one snapshot: backwards and forwards along the primary key from the key.
    const [row] = await this.db.rows<{ before: KeyedRow | null; after: KeyedRow[] | null }>(
      `SELECT (SELECT row_to_json(b) FROM (SELECT completed_at, ${EVALUATION_COLUMNS} FROM study_evaluations
                 WHERE study_id = $1 AND (completed_at, trial_id) < ($2::text COLLATE "C", $3::int) ORDER BY completed_at DESC, trial_id DESC LIMIT 1) b) AS before,
         (SELECT json_agg(a ORDER BY a.completed_at, a.trial_id) FROM (SELECT completed_at, ${EVALUATION_COLUMNS} FROM study_evaluations
                 WHERE study_id = $1 AND (completed_at, trial_id) >= ($2::text COLLATE "C", $3::int)) a) AS after`,
      [studyId, key.completedAt, key.trialId],
    );
    return { before: row?.before ? toKeyed(row.before) : null, after: (row?.after ?? []).map(toKeyed) };
  }

  async listEvaluations(studyId: string, q: { afterIndex: number; limit: number }): Promise<EvaluationRecord[]> {
    return (await this.db.rows<EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND idx > $2 ORDER BY idx LIMIT $3`, [studyId, q.afterIndex, q.limit])).map(toEvaluation);
  }

  async evaluationsAt(studyId: string, indices: readonly number[]): Promise<EvaluationRecord[]> {
    if (indices.length === 0) return [];
    return (await this.db.rows<EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND idx = ANY($2::int[]) ORDER BY idx`, [studyId, [...indices]])).map(toEvaluation);
  }

  async listBestSteps(studyId: string, q: { afterIndex: number; throughIndex: number; limit: number }): Promise<EvaluationRecord[]> {
    return (
      await this.db.rows<EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND improved AND idx > $2 AND idx <= $3 ORDER BY idx LIMIT $4`, [
        studyId,
        q.afterIndex,
        q.throughIndex,
        q.limit,
      ])
    ).map(toEvaluation);
  }

  async listEngineStatesPage(studyId: string, q: { afterGeneration: number; limit: number }): Promise<EngineStateRecord[]> {
    return (await this.db.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 AND generation > $2 ORDER BY generation LIMIT $3', [studyId, q.afterGeneration, q.limit])).map(toEngineState);
  }

  async expiredLeaseCounts(studyIds: readonly string[], now: string): Promise<Record<string, number>> {
    if (studyIds.length === 0) return {};
    const rows = await this.db.rows<{ study_id: string; n: number }>(
      "SELECT study_id, COUNT(*)::int AS n FROM trials WHERE study_id = ANY($1::text[]) AND state = 'ACTIVE' AND lease_expires_at <= $2 GROUP BY study_id",
      [[...studyIds], now],
    );
    return Object.fromEntries(rows.map((r) => [r.study_id, r.n]));
  }

  async operationalCounts(now: string): Promise<OperationalCounts> {
    const studiesByState = Object.fromEntries(STUDY_STATES.map((s) => [s, 0])) as Record<StudyState, number>;
    for (const r of await this.db.rows<{ state: StudyState; n: number }>('SELECT state, COUNT(*) AS n FROM studies GROUP BY state')) studiesByState[r.state] = r.n;
    // ISO-8601 UTC strings of one format compare like the instants they name (the column is COLLATE "C").
    const [leases] = await this.db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM trials WHERE state = 'ACTIVE' AND lease_expires_at > $1", [now]);
    return { studiesByState, openLeases: leases?.n ?? 0 };
  }
}
