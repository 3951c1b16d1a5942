/**
 * The loop's unit of work, decided once for both databases. A GenerationCommit (storage.ts) is the
 * record of it; this module turns it into
 *
 *   - its guards: what the database must still hold for the commit to apply (the study's commit
 *     count, the engine state's revision, the state of each trial it changes), in the order the
 *     outcomes are decided (`verdict`): study_not_found, revision_conflict, trial_conflict;
 *   - its writes: the snapshot under the next revision, each trial's change, the new trials (their
 *     ids follow the study's next id, which only the database knows), the evaluation rows, the
 *     study's new generation and state.
 *
 * SQLite reads the study's guarded values in its write transaction and calls `studyVerdict`, then
 * lets its guarded updates check the trials' states, rolling the commit back when one changes no
 * row (trials-repo.ts); PostgreSQL compares them in the statement that takes the study's row lock, in the same order
 * (postgres/commit.ts). Either writes the rows as given, from the column list of trial-columns.ts.
 * Nothing here or there decides anything about results: the evaluation rows are the service's
 * (src/domain/results).
 */
import type { GenerationCommit, JsonValue, KeyedEvaluation, StudyState, TrialRecord, TrialState } from './storage.js';
import { newTrialRecord } from './storage.js';
import type { TrialChange } from './trial-columns.js';

/** A trial state no trial is in: the guard of a commit that contradicts itself (see commitGuards). */
export const NO_STATE = '' as TrialState;

export interface CommitGuards {
  /** The study's commit count the caller loaded (absent: not checked). */
  commitSeq: number | undefined;
  /** The latest engine state's revision (null: the study has none). */
  revision: number | null;
  /** Each trial the commit changes, once, with the state it must be in now. */
  trials: { trialId: number; expectedState: TrialState }[];
}

/** The values the guards are checked against, as the database holds them under its write lock; null when the study does not exist. */
export interface CommitBase {
  commitSeq: number;
  revision: number | null;
  /** The current state of each guarded trial (absent: no such trial). */
  trialStates: ReadonlyMap<number, TrialState>;
}

export type Verdict = 'committed' | 'study_not_found' | 'revision_conflict' | 'trial_conflict';

export function commitGuards(c: GenerationCommit): CommitGuards {
  // The updates in order, each against the state the previous ones leave: a trial changed twice
  // must be, now, in the first change's expected state, and the second must expect the first's
  // result (else the commit contradicts itself, and its guard is a state no trial is in).
  const first = new Map<number, TrialState>();
  const after = new Map<number, TrialState>();
  for (const u of c.trialUpdates ?? []) {
    const prev = after.get(u.trialId);
    if (prev === undefined) first.set(u.trialId, u.expectedState);
    else if (prev !== u.expectedState) first.set(u.trialId, NO_STATE);
    after.set(u.trialId, u.state);
  }
  return { commitSeq: c.expectedCommitSeq, revision: c.expectedRevision, trials: [...first].map(([trialId, expectedState]) => ({ trialId, expectedState })) };
}

export function verdict(g: CommitGuards, base: CommitBase | null): Verdict {
  const study = studyVerdict(g, base);
  if (study !== 'committed') return study;
  for (const t of g.trials) if (base!.trialStates.get(t.trialId) !== t.expectedState) return 'trial_conflict';
  return 'committed';
}

/**
 * The verdict of the study's guards alone (it exists, its commit count, its revision), which come
 * first: 'committed' when they hold and only the trials' states remain to check. SQLite checks
 * those by its guarded updates themselves (trials-repo.ts), an update that changes no row being
 * a trial_conflict.
 */
export function studyVerdict(g: CommitGuards, base: Omit<CommitBase, 'trialStates'> | null): Verdict {
  if (!base) return 'study_not_found';
  if (g.commitSeq !== undefined && g.commitSeq !== base.commitSeq) return 'revision_conflict';
  if (base.revision !== g.revision) return 'revision_conflict';
  return 'committed';
}

/** The rows a commit writes once its guards hold, for a study whose next trial id is `nextTrialId`. */
export interface CommitWrites {
  /** The revision now current: the next one when a snapshot is written. */
  revision: number;
  engineState: { generation: number; revision: number; version: number; state: JsonValue; createdAt: string } | null;
  /** Each changed trial's final change (a trial changed twice ends as the second change says), guarded by the state it must be in now. */
  trialUpdates: { trialId: number; expectedState: TrialState; change: TrialChange }[];
  newTrials: TrialRecord[];
  evaluations: readonly KeyedEvaluation[];
  study: { generation: number; nextTrialId: number; updatedAt: string; state: { state: StudyState; reason: string | null } | null };
}

export function commitWrites(studyId: string, c: GenerationCommit, nextTrialId: number): CommitWrites {
  const evaluations = c.evaluations ?? [];
  // Rows computed from another state than the one checked would be wrong: they need the guard.
  if (evaluations.length > 0 && c.expectedCommitSeq === undefined) throw new Error('a commit with evaluation rows must give expectedCommitSeq');
  const revision = (c.expectedRevision ?? 0) + (c.engineState ? 1 : 0);
  const expected = new Map(commitGuards(c).trials.map((t) => [t.trialId, t.expectedState]));
  const last = new Map<number, CommitWrites['trialUpdates'][number]>();
  for (const { trialId, expectedState: _, ...change } of c.trialUpdates ?? []) {
    last.set(trialId, { trialId, expectedState: expected.get(trialId)!, change: { ...change, updatedAt: c.now } });
  }
  return {
    revision,
    engineState: c.engineState ? { generation: c.generation, revision, version: c.engineState.version, state: c.engineState.state, createdAt: c.now } : null,
    trialUpdates: [...last.values()],
    newTrials: c.newTrials.map((t, i) => newTrialRecord(studyId, nextTrialId + i, t, c.now)),
    evaluations,
    study: { generation: c.generation, nextTrialId: nextTrialId + c.newTrials.length, updatedAt: c.now, state: c.studyState ?? null },
  };
}

/**
 * The commit count an imported study starts at, on both databases: the time in microseconds, not 0,
 * so that a study imported under the id of a deleted one never matches a count a reader cached for
 * the deleted one (a replica's warm snapshot; the process's own study cache).
 */
export function importedCommitSeq(now: number = Date.now()): number {
  return Math.round(now * 1000);
}
