/**
 * SQL for the read side that needs a whole study at once (history, export) and for import, the
 * unit of work that writes a study, its trials and its engine states in one transaction.
 */
import { importedCommitSeq } from '../commit-plan.js';
import type { SqliteDatabase } from './connection.js';
import type { EngineStateRecord, ImportedEngineState, ImportedStudy, ImportedTrial, IntermediateRecord, KeyedEvaluation, StudyRecord, TrialRecord } from '../storage.js';
import { evaluationWriter } from './summaries-repo.js';
import type { IntermediateRepo } from './intermediate-repo.js';
import type { StudiesRepo } from './studies-repo.js';
import { toEngineState, toTrial, type EngineStateRow, type TrialRow } from './rows.js';
import { SQLITE_INSERT_TRIAL, sqliteTrial } from '../trial-columns.js';

export class ReportsRepo {
  private readonly allTrialsStmt;
  private readonly allStatesStmt;
  private readonly recentStmt;
  private readonly recentByStmt;
  private readonly insertTrialStmt;
  private readonly insertStateStmt;
  private readonly finishStudyStmt;
  private readonly importTx;
  private readonly exportTx;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly studies: StudiesRepo,
    private readonly intermediate: IntermediateRepo,
  ) {
    this.allTrialsStmt = db.prepare<[string], TrialRow>('SELECT * FROM trials WHERE study_id = ? ORDER BY trial_id');
    this.allStatesStmt = db.prepare<[string], EngineStateRow>('SELECT * FROM engine_states WHERE study_id = ? ORDER BY generation');
    // The last `limit` evaluations backwards along study_evaluations' key (study, completed_at,
    // trial id), from the end or from a time, then each trial by primary key: O(limit) rows.
    const recent = (where: string) =>
      `SELECT t.* FROM (SELECT trial_id, completed_at FROM study_evaluations WHERE study_id = @study${where} ORDER BY completed_at DESC, trial_id DESC LIMIT @limit) e
        JOIN trials t ON t.study_id = @study AND t.trial_id = e.trial_id ORDER BY e.completed_at, e.trial_id`;
    this.recentStmt = db.prepare<[{ study: string; limit: number }], TrialRow>(recent(''));
    this.recentByStmt = db.prepare<[{ study: string; limit: number; by: string }], TrialRow>(recent(' AND completed_at <= @by'));
    // Unlike a generation commit, an import writes every column as exported (failure reasons,
    // per-trial update times), so the copy reads back exactly like the original.
    this.insertTrialStmt = db.prepare(SQLITE_INSERT_TRIAL);
    this.insertStateStmt = db.prepare(`
      INSERT INTO engine_states (study_id, generation, revision, version, state, created_at)
      VALUES (@study_id, @generation, @revision, @version, @state, @created_at)`);
    this.finishStudyStmt = db.prepare('UPDATE studies SET next_trial_id = ?, commit_seq = ? WHERE id = ?');
    // A read transaction, so that no commit lands between reading the study and its trials.
    this.exportTx = db.transaction((tenantId: string, studyId: string) => {
      const study = this.studies.get(tenantId, studyId);
      return study ? { study, trials: this.allTrials(studyId), engineStates: this.engineStates(studyId), intermediate: this.intermediate.list(studyId) } : null;
    });
    const writeEvaluations = evaluationWriter(db);
    this.importTx = db.transaction((s: ImportedStudy, trials: ImportedTrial[], states: ImportedEngineState[], intermediate: IntermediateRecord[], evaluations: KeyedEvaluation[]) => {
      const study = this.importInTx(s, trials, states, intermediate);
      writeEvaluations(s.id, evaluations);
      return study;
    },
    );
  }

  allTrials(studyId: string): TrialRecord[] {
    return this.allTrialsStmt.all(studyId).map(toTrial);
  }

  /** Storage.listRecentCompleted. */
  recentCompleted(studyId: string, q: { limit: number; completedBy: string | null }): TrialRecord[] {
    const rows = q.completedBy === null ? this.recentStmt.all({ study: studyId, limit: q.limit }) : this.recentByStmt.all({ study: studyId, limit: q.limit, by: q.completedBy });
    return rows.map(toTrial);
  }

  engineStates(studyId: string): EngineStateRecord[] {
    return this.allStatesStmt.all(studyId).map(toEngineState);
  }

  exportStudy(tenantId: string, studyId: string): { study: StudyRecord; trials: TrialRecord[]; engineStates: EngineStateRecord[]; intermediate: IntermediateRecord[] } | null {
    return this.exportTx.deferred(tenantId, studyId);
  }

  importStudy(s: ImportedStudy, trials: ImportedTrial[], states: ImportedEngineState[], intermediate: IntermediateRecord[], evaluations: KeyedEvaluation[]): StudyRecord {
    return this.importTx.immediate(s, trials, states, intermediate, evaluations);
  }

  private importInTx(s: ImportedStudy, trials: ImportedTrial[], states: ImportedEngineState[], intermediate: IntermediateRecord[]): StudyRecord {
    this.studies.insertImported(s);
    for (const t of trials) this.insertTrialStmt.run(sqliteTrial({ ...t, studyId: s.id }));
    for (const e of states) {
      this.insertStateStmt.run({ study_id: s.id, generation: e.generation, revision: e.revision, version: e.version, state: JSON.stringify(e.state), created_at: e.createdAt });
    }
    this.intermediate.insertAll(s.id, intermediate);
    // Trial ids continue after the highest imported one, as they would have in the original.
    const nextTrialId = trials.reduce((m, t) => Math.max(m, t.trialId), 0) + 1;
    this.finishStudyStmt.run(nextTrialId, importedCommitSeq(), s.id);
    return this.studies.get(s.tenantId, s.id)!;
  }
}
