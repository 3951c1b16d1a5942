/** Whole studies on PostgreSQL (ReportsStore): every trial and engine state of a study, the recent completions, export (one snapshot) and import (one transaction). */
import { importedCommitSeq } from '../commit-plan.js';
import {
  type EngineStateRecord,
  type KeyedEvaluation,
  type ImportedEngineState,
  type ImportedStudy,
  type ImportedTrial,
  type IntermediateRecord,
  type StudyRecord,
  type TrialRecord,
} from '../storage.js';
import type { PgDb } from './db.js';
import { COUNTS_SQL, json, toEngineState, toStudy, toTrial, type EngineStateRow, type StudyRow, type TrialRow } from './rows.js';
import { intermediateFromRow, type IntermediateRow } from '../rows.js';
import { pgInsertTrials, pgTrial } from '../trial-columns.js';
import { insertStudy } from './studies-repo.js';
import { INSERT_INTERMEDIATE, intermediateColumns } from './intermediate-repo.js';

const READ_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** Evaluation rows as the import's six arrays. */
function evaluationColumns(e: readonly KeyedEvaluation[]): unknown[] {
  return [e.map((x) => x.completedAt), e.map((x) => x.trialId), e.map((x) => x.index), e.map((x) => x.value), e.map((x) => x.bestSoFar), e.map((x) => x.improved)];
}

/** Evaluation rows of an import (a new study: nothing to replace). */
const INSERT_EVALUATIONS = `INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
  SELECT $1, u.* FROM unnest($2::text[], $3::int[], $4::int[], $5::float8[], $6::float8[], $7::bool[]) AS u`;

/** An import's trials, as one JSON array (trial-columns.ts). */
const INSERT_TRIALS = pgInsertTrials('$1');

export class ReportsRepo {
  constructor(private readonly db: PgDb) {}

  async listAllTrials(studyId: string): Promise<TrialRecord[]> {
    return (await this.db.rows<TrialRow>('SELECT * FROM trials WHERE study_id = $1 ORDER BY trial_id', [studyId])).map(toTrial);
  }

  async listRecentCompleted(studyId: string, q: { limit: number; completedBy: string | null }): Promise<TrialRecord[]> {
    // Backwards along study_evaluations' key from `completedBy`, then each trial by primary key.
    const rows = await this.db.rows<TrialRow>(
      `SELECT t.* FROM (SELECT trial_id, completed_at FROM study_evaluations WHERE study_id = $1 AND ($2::text IS NULL OR completed_at <= $2::text)
        ORDER BY completed_at DESC, trial_id DESC LIMIT $3) e JOIN trials t ON t.study_id = $1 AND t.trial_id = e.trial_id ORDER BY e.completed_at, e.trial_id`,
      [studyId, q.completedBy, q.limit],
    );
    return rows.map(toTrial);
  }

  async listEngineStates(studyId: string): Promise<EngineStateRecord[]> {
    return (await this.db.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 ORDER BY generation', [studyId])).map(toEngineState);
  }

  exportStudy(tenantId: string, studyId: string): Promise<{ study: StudyRecord; trials: TrialRecord[]; engineStates: EngineStateRecord[]; intermediate: IntermediateRecord[] } | null> {
    // One snapshot for the three reads, so that no commit lands between the study and its trials.
    return this.db.tx(READ_SNAPSHOT, async (c) => {
      const [study] = (await c.query<StudyRow>(`SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, studyId])).rows;
      if (!study) return null;
      const trials = (await c.query<TrialRow>('SELECT * FROM trials WHERE study_id = $1 ORDER BY trial_id', [studyId])).rows.map(toTrial);
      const engineStates = (await c.query<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 ORDER BY generation', [studyId])).rows.map(toEngineState);
      const intermediate = (await c.query<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 ORDER BY trial_id, step', [studyId])).rows.map(intermediateFromRow);
      return { study: toStudy(study), trials, engineStates, intermediate };
    });
  }

  importStudy(s: ImportedStudy, trials: ImportedTrial[], states: ImportedEngineState[], intermediate: IntermediateRecord[], evaluations: KeyedEvaluation[]): Promise<StudyRecord> {
    return this.db.tx('BEGIN', async (c) => {
      const insert = insertStudy(s);
      await c.query(insert.text, insert.values);
      if (trials.length > 0) await c.query(INSERT_TRIALS, [JSON.stringify(trials.map((t) => pgTrial({ ...t, studyId: s.id })))]);
      if (states.length > 0) {
        const col = <K extends keyof ImportedEngineState>(k: K) => states.map((e) => e[k]);
        await c.query(
          `INSERT INTO engine_states (study_id, generation, revision, version, state, created_at)
             SELECT $1, u.* FROM unnest($2::int[], $3::int[], $4::int[], $5::json[], $6::text[]) AS u`,
          [s.id, col('generation'), col('revision'), col('version'), states.map((e) => json(e.state)), col('createdAt')],
        );
      }
      if (intermediate.length > 0) await c.query(INSERT_INTERMEDIATE, intermediateColumns(s.id, intermediate));
      if (evaluations.length > 0) await c.query(INSERT_EVALUATIONS, [s.id, ...evaluationColumns(evaluations)]);
      // Trial ids continue after the highest imported one, as they would have in the original.
      const nextTrialId = trials.reduce((m, t) => Math.max(m, t.trialId), 0) + 1;
      // The commit count an import starts at (commit-plan.ts importedCommitSeq), as on SQLite.
      const row = (
        await c.query<StudyRow>(`UPDATE studies s SET next_trial_id = $2, commit_seq = $3 WHERE s.id = $1 RETURNING s.*, ${COUNTS_SQL}`, [
          s.id,
          nextTrialId,
          importedCommitSeq(),
        ])
      ).rows[0]!;
      return toStudy(row);
    });
  }
}
