/** All SQL for trials and engine-state snapshots, including the "commit a generation" unit of work. */
import type { SqliteDatabase } from './connection.js';
import type { CommitResult, EngineStateRecord, GenerationCommit, InitialEngineState, NewTrial, Page, PageRequest, TrialRecord, TrialState, TrialUpdate } from '../storage.js';
import { toEngineState, toTrial, type EngineStateRow, type TrialRow } from './rows.js';
import { stateFilter } from '../rows.js';
import { evaluationWriter } from './summaries-repo.js';

/** Thrown inside the commit transaction to roll it back when a guarded trial update finds another state. */
class TrialConflict extends Error {}

function trialUpdateParams(u: TrialUpdate) {
  return {
    trial_id: u.trialId,
    expected_state: u.expectedState,
    state: u.state,
    client_id: u.clientId,
    lease_expires_at: u.leaseExpiresAt,
    value: u.value,
    stderr: u.stderr,
    failure_reason: u.failureReason,
    late: u.late ? 1 : 0,
    completed_at: u.completedAt,
  };
}

export class TrialsRepo {
  private readonly latestStateStmt;
  private readonly stateAtStmt;
  private readonly trialStmt;
  private readonly insertTrialStmt;
  private readonly updateTrialStmt;
  private readonly commitTx;
  private readonly commitManyTx;
  private readonly headStmt;
  private readonly nextIdStmt;
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
    this.insertTrialStmt = db.prepare(`
      INSERT INTO trials (study_id, trial_id, state, generation, client_id, lease_expires_at, parameters, point, value,
        stderr, source, created_at, completed_at, updated_at)
      VALUES (@study_id, @trial_id, @state, @generation, @client_id, @lease_expires_at, @parameters, @point, @value,
        @stderr, @source, @now, @completed_at, @now)`);
    this.updateTrialStmt = db.prepare(`
      UPDATE trials SET state = @state, client_id = @client_id, lease_expires_at = @lease_expires_at, value = @value,
        stderr = @stderr, failure_reason = @failure_reason, late = @late, completed_at = @completed_at, updated_at = @now
      WHERE study_id = @study_id AND trial_id = @trial_id AND state = @expected_state`);
    this.writeEvaluations = evaluationWriter(db);
    // IMMEDIATE takes the write lock up front, so the revision check and the writes cannot interleave
    // with another connection's commit.
    this.commitTx = db.transaction((studyId: string, c: GenerationCommit): CommitResult => this.commitInTx(studyId, c));
    this.commitManyTx = db.transaction((list: readonly [string, GenerationCommit][]) =>
      list.map(([studyId, c]) => {
        try {
          return { ok: true as const, result: this.commit(studyId, c) };
        } catch (error) {
          return { ok: false as const, error };
        }
      }),
    );
    this.headStmt = db.prepare<[string], { generation: number; revision: number }>(
      'SELECT generation, revision FROM engine_states WHERE study_id = ? ORDER BY revision DESC LIMIT 1',
    );
    this.nextIdStmt = db.prepare<[string], { next_trial_id: number; commit_seq: number }>('SELECT next_trial_id, commit_seq FROM studies WHERE id = ?');
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
   * One commit in an IMMEDIATE transaction of its own, or, inside a caller's transaction (commitMany),
   * in a savepoint: better-sqlite3 runs a nested transaction function as a savepoint.
   */
  commit(studyId: string, c: GenerationCommit): CommitResult {
    try {
      return this.commitTx.immediate(studyId, c);
    } catch (err) {
      if (err instanceof TrialConflict) return { committed: false, reason: 'trial_conflict' };
      throw err;
    }
  }

  /**
   * Several commits (any studies) in one IMMEDIATE transaction, so one fsync: each in a savepoint
   * of its own (a nested better-sqlite3 transaction), so a conflict or error rolls back only that
   * one. Throws only if the transaction as a whole fails, and then none of it is written.
   */
  commitMany(list: readonly [string, GenerationCommit][]): ({ ok: true; result: CommitResult } | { ok: false; error: unknown })[] {
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

  private commitInTx(studyId: string, c: GenerationCommit): CommitResult {
    const study = this.nextIdStmt.get(studyId);
    if (!study) return { committed: false, reason: 'study_not_found' };
    if (c.expectedCommitSeq !== undefined && c.expectedCommitSeq !== study.commit_seq) return { committed: false, reason: 'revision_conflict' };
    // Revision only: the state itself (possibly large) is not read back.
    const latest = this.headStmt.get(studyId);
    if ((latest?.revision ?? null) !== c.expectedRevision) return { committed: false, reason: 'revision_conflict' };
    let revision = latest?.revision ?? 0;
    if (c.engineState) {
      revision += 1;
      this.insertState(studyId, c.generation, revision, c.engineState, c.now);
    }
    for (const u of c.trialUpdates ?? []) {
      // Another writer moved this trial on: throw so the whole transaction (the snapshot too) rolls back.
      if (this.updateTrialStmt.run({ ...trialUpdateParams(u), study_id: studyId, now: c.now }).changes === 0) throw new TrialConflict();
    }
    const ids = c.newTrials.map((t, i) => this.insertTrial(studyId, study.next_trial_id + i, t, c.now));
    if (c.evaluations && c.evaluations.length > 0) {
      // Rows computed from another state than the one checked above would be wrong: they need the guard.
      if (c.expectedCommitSeq === undefined) throw new Error('a commit with evaluation rows must give expectedCommitSeq');
      this.writeEvaluations(studyId, c.evaluations);
    }
    this.advanceStudyStmt.run(c.generation, study.next_trial_id + c.newTrials.length, c.now, studyId);
    if (c.studyState) this.studyStateStmt.run(c.studyState.state, c.studyState.reason, studyId);
    return { committed: true, revision, trialIds: ids };
  }

  /** Inside the createStudy transaction: the generation-0 snapshot, revision 1. */
  insertInitialState(studyId: string, state: InitialEngineState, now: string): void {
    this.insertState(studyId, 0, 1, state, now);
  }

  private insertState(studyId: string, generation: number, revision: number, s: InitialEngineState, now: string): void {
    this.insertStateStmt.run(studyId, generation, revision, s.version, JSON.stringify(s.state), now);
  }

  private insertTrial(studyId: string, trialId: number, t: NewTrial, now: string): number {
    this.insertTrialStmt.run({
      study_id: studyId,
      trial_id: trialId,
      state: t.state,
      generation: t.generation,
      client_id: t.clientId ?? null,
      lease_expires_at: t.leaseExpiresAt ?? null,
      parameters: JSON.stringify(t.parameters),
      point: t.point === null ? null : JSON.stringify(t.point),
      value: t.value ?? null,
      stderr: t.stderr ?? null,
      source: t.source,
      now,
      completed_at: t.completedAt ?? null,
    });
    return trialId;
  }
}
