/** All SQL for trials and engine-state snapshots, including the "commit a generation" unit of work. */
import type { SqliteDatabase } from './connection.js';
import type { CommitResult, EngineStateRecord, GenerationCommit, InitialEngineState, Page, PageRequest, TrialRecord, TrialState } from '../storage.js';
import { toEngineState, toTrial, type EngineStateRow, type TrialRow } from './rows.js';
import { stateFilter } from '../rows.js';
import { commitGuards, commitWrites, studyVerdict, type CommitWrites } from '../commit-plan.js';
import type { QueuedCommit, Settled } from '../group-commit.js';
import { SQLITE_INSERT_TRIAL, SQLITE_UPDATE_TRIAL, sqliteTrial, sqliteTrialUpdate } from '../trial-columns.js';
import { evaluationWriter } from './summaries-repo.js';

export class TrialsRepo {
  private readonly latestStateStmt;
  private readonly stateAtStmt;
  private readonly trialStmt;
  private readonly insertTrialStmt;
  private readonly updateTrialStmt;
  private readonly attemptTx;
  private readonly commitManyTx;
  private readonly headStmt;
  private readonly studyGuardStmt;
  private readonly advanceStudyStmt;
  private readonly studyStateStmt;
  private readonly insertStateStmt;
  private readonly liveStmt;
  private readonly generationStmt;
  private readonly completedStmt;
  private readonly completedAfterStmt;
  private readonly writeEvaluations;

  constructor(private readonly db: SqliteDatabase) {
    this.latestStateStmt = db.prepare<[string], EngineStateRow>('SELECT * FROM engine_states WHERE study_id = ? ORDER BY revision DESC LIMIT 1');
    this.stateAtStmt = db.prepare<[string, number], EngineStateRow>('SELECT * FROM engine_states WHERE study_id = ? AND generation = ?');
    this.trialStmt = db.prepare<[string, number], TrialRow>('SELECT * FROM trials WHERE study_id = ? AND trial_id = ?');
    this.insertTrialStmt = db.prepare(SQLITE_INSERT_TRIAL);
    this.updateTrialStmt = db.prepare(SQLITE_UPDATE_TRIAL);
    this.writeEvaluations = evaluationWriter(db);
    // A transaction of its own (commit) or a savepoint inside the caller's (commitMany): thrown
    // out of, it writes nothing. IMMEDIATE takes the write lock up front, so the checks and the
    // writes cannot interleave with another connection's commit.
    this.attemptTx = db.transaction((studyId: string, c: GenerationCommit): CommitResult => this.attempt(studyId, c));
    this.commitManyTx = db.transaction((list: readonly QueuedCommit[]): Exclude<Settled, { retry: true }>[] =>
      list.map(({ studyId, commit }) => {
        try {
          return { ok: true as const, result: this.settle(() => this.attemptTx(studyId, commit)) };
        } catch (error) {
          return { ok: false as const, error };
        }
      }),
    );
    this.headStmt = db.prepare<[string], { generation: number; revision: number }>(
      'SELECT generation, revision FROM engine_states WHERE study_id = ? ORDER BY revision DESC LIMIT 1',
    );
    // The study's guarded values in one statement: its commit count, its next trial id, and the
    // latest engine state's revision (by engine_states_revision; the state itself is not read).
    this.studyGuardStmt = db.prepare<[string], { next_trial_id: number; commit_seq: number; revision: number | null }>(
      'SELECT next_trial_id, commit_seq, (SELECT revision FROM engine_states WHERE study_id = studies.id ORDER BY revision DESC LIMIT 1) AS revision FROM studies WHERE id = ?',
    );
    this.advanceStudyStmt = db.prepare<[number, number, string, string]>(
      'UPDATE studies SET generation = ?, next_trial_id = ?, updated_at = ?, commit_seq = commit_seq + 1 WHERE id = ?',
    );
    this.studyStateStmt = db.prepare<[string, string | null, string]>('UPDATE studies SET state = ?, reason = ? WHERE id = ?');
    this.insertStateStmt = db.prepare<[string, number, number, number, string, string]>(`INSERT INTO engine_states (study_id, generation, revision, version, state, created_at)
        VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (study_id, generation) DO UPDATE SET revision = excluded.revision, version = excluded.version,
          state = excluded.state, created_at = excluded.created_at`);
    // Three statements rather than one UNION: ordered by trial id, a UNION makes the planner walk
    // the whole study by primary key; apart, each reads only its index range (trials_study_state,
    // trials_study_generation, the primary key).
    this.liveStmt = db.prepare<[string], TrialRow>("SELECT * FROM trials WHERE study_id = ? AND state IN ('REQUESTED', 'ACTIVE')");
    this.generationStmt = db.prepare<[string, number], TrialRow>("SELECT * FROM trials WHERE study_id = ? AND generation = ? AND source = 'suggested'");
    this.completedStmt = db.prepare<[string], TrialRow>(
      "SELECT * FROM trials WHERE study_id = ? AND state = 'COMPLETED' ORDER BY completed_at, trial_id",
    );
    // A range of study_evaluations_idx, each trial by primary key: O(new), not O(study).
    this.completedAfterStmt = db.prepare<{ study_id: string; position: number; at: number }, TrialRow>(`
      SELECT t.* FROM study_evaluations e JOIN trials t ON t.study_id = e.study_id AND t.trial_id = e.trial_id
      WHERE e.study_id = @study_id AND e.idx > @position
        AND (@position = 0 OR EXISTS (SELECT 1 FROM study_evaluations c WHERE c.study_id = @study_id AND c.idx = @position AND c.trial_id = @at))
      ORDER BY e.idx`);
  }

  /** Storage.listCompletedTrialsAfter. */
  completedAfter(studyId: string, position: number, trialIdAt: number): TrialRecord[] {
    return this.completedAfterStmt.all({ study_id: studyId, position, at: trialIdAt }).map(toTrial);
  }

  /** Generation and revision of the latest engine state (no state parsed). */
  head(studyId: string): { generation: number; revision: number } | null {
    return this.headStmt.get(studyId) ?? null;
  }

  /** Live trials, the suggested trials of `generation`, and the named ids, by trial id. */
  loopTrials(studyId: string, generation: number, trialIds: readonly number[]): TrialRecord[] {
    const rows = new Map<number, TrialRow>();
    for (const r of this.liveStmt.all(studyId)) rows.set(r.trial_id, r);
    for (const r of this.generationStmt.all(studyId, generation)) rows.set(r.trial_id, r);
    for (const id of trialIds) {
      if (rows.has(id)) continue;
      const r = this.trialStmt.get(studyId, id);
      if (r) rows.set(id, r);
    }
    return [...rows.values()].sort((a, b) => a.trial_id - b.trial_id).map(toTrial);
  }

  completed(studyId: string): TrialRecord[] {
    return this.completedStmt.all(studyId).map(toTrial);
  }

  engineState(studyId: string, generation?: number): EngineStateRecord | null {
    const row = generation === undefined ? this.latestStateStmt.get(studyId) : this.stateAtStmt.get(studyId, generation);
    return row ? toEngineState(row) : null;
  }

  /**
   * One commit in an IMMEDIATE transaction of its own, or, inside a caller's transaction, in a
   * savepoint: better-sqlite3 runs a nested transaction function as a savepoint.
   */
  commit(studyId: string, c: GenerationCommit): CommitResult {
    return this.settle(() => this.attemptTx.immediate(studyId, c));
  }

  /**
   * Several commits (any studies) in one IMMEDIATE transaction, so one fsync: each in a savepoint
   * of its own (a nested better-sqlite3 transaction), so a conflict or error rolls back only that
   * one. Throws only if the transaction as a whole fails, and then none of it is written.
   */
  commitMany(list: readonly QueuedCommit[]): Exclude<Settled, { retry: true }>[] {
    return this.commitManyTx.immediate(list);
  }

  trial(studyId: string, trialId: number): TrialRecord | null {
    const row = this.trialStmt.get(studyId, trialId);
    return row ? toTrial(row) : null;
  }

  page(studyId: string, q: PageRequest & { state?: TrialState; now?: string }): Page<TrialRecord> {
    const after = q.after === null ? 0 : Number(q.after);
    const params: Record<string, unknown> = { study_id: studyId, after, limit: q.limit + 1 };
    const where = stateFilter(q.state, q.now, (v) => {
      const name = `p${Object.keys(params).length}`;
      params[name] = v;
      return `@${name}`;
    });
    // With a filter, the (study, state, trial id) index: ordered by trial id, SQLite's planner would
    // otherwise walk the primary key from the cursor and skip every trial in another state.
    const source = where ? 'trials INDEXED BY trials_study_state_id' : 'trials';
    const rows = this.db.prepare<Record<string, unknown>, TrialRow>(`SELECT * FROM ${source} WHERE study_id = @study_id AND trial_id > @after ${where} ORDER BY trial_id LIMIT @limit`).all(params);
    const more = rows.length > q.limit;
    const items = (more ? rows.slice(0, q.limit) : rows).map(toTrial);
    return { items, next: more ? String(items[items.length - 1]!.trialId) : null };
  }

  /** A commit's outcome: a trial conflict (thrown out of its transaction or savepoint, which wrote nothing) is one of them. */
  private settle(run: () => CommitResult): CommitResult {
    try {
      return run();
    } catch (err) {
      if (err instanceof TrialConflict) return { committed: false, reason: 'trial_conflict' };
      throw err;
    }
  }

  /**
   * The guards and the writes of commit-plan.ts, against the study as this transaction reads it.
   * The study's guards are read and checked first; the trials' are the guarded updates' own
   * WHERE state = expected, run before any other write: one that changes no row (the trial in
   * another state, or absent) throws TrialConflict, and the commit's transaction or savepoint is
   * rolled back with whatever the updates before it wrote. So the outcome is the one `verdict`
   * gives (study, then revision, then trials) without reading the trials' states beforehand: that
   * read, through json_each, walked all of the study's trials (trials_study_state_id) at every commit.
   */
  private attempt(studyId: string, c: GenerationCommit): CommitResult {
    const study = this.studyGuardStmt.get(studyId);
    const outcome = studyVerdict(commitGuards(c), study ? { commitSeq: study.commit_seq, revision: study.revision } : null);
    if (outcome !== 'committed') return { committed: false, reason: outcome };
    const w = commitWrites(studyId, c, study!.next_trial_id);
    this.write(studyId, w);
    return { committed: true, revision: w.revision, trialIds: w.newTrials.map((t) => t.trialId) };
  }

  private write(studyId: string, w: CommitWrites): void {
    // First, before the new trials exist: an update naming a new trial's id must find no row, as
    // it would have before the commit.
    for (const u of w.trialUpdates) {
      if (this.updateTrialStmt.run(sqliteTrialUpdate(studyId, u.trialId, u.expectedState, u.change)).changes !== 1) throw new TrialConflict();
    }
    if (w.engineState) this.insertState(studyId, w.engineState.generation, w.engineState.revision, w.engineState, w.engineState.createdAt);
    for (const t of w.newTrials) this.insertTrialStmt.run(sqliteTrial(t));
    if (w.evaluations.length > 0) this.writeEvaluations(studyId, w.evaluations);
    this.advanceStudyStmt.run(w.study.generation, w.study.nextTrialId, w.study.updatedAt, studyId);
    if (w.study.state) this.studyStateStmt.run(w.study.state.state, w.study.state.reason, studyId);
  }

  /** Inside the createStudy transaction: the generation-0 snapshot, revision 1. */
  insertInitialState(studyId: string, state: InitialEngineState, now: string): void {
    this.insertState(studyId, 0, 1, state, now);
  }

  private insertState(studyId: string, generation: number, revision: number, s: InitialEngineState, now: string): void {
    this.insertStateStmt.run(studyId, generation, revision, s.version, JSON.stringify(s.state), now);
  }
}

/** A guarded trial update changed no row: thrown to roll the commit back, answered as trial_conflict. */
class TrialConflict extends Error {
  constructor() {
    super('trial_conflict');
  }
}
