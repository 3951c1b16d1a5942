/**
 * A group of loop commits (group-commit.ts) as one PostgreSQL statement, built here in TypeScript
 * from the commits' guards and writes (commit-plan.ts) and the trials' columns (trial-columns.ts):
 * one round trip and one transaction (the statement's own), durable when it returns. No function
 * lives in the database: the statement is data-modifying CTEs fed by six JSON parameters.
 *
 *   1. `locked`: the row locks of the group's studies (FOR UPDATE, in study order, so that two
 *      groups never deadlock), the database's per-study lock, held until the statement commits.
 *      The rows it returns are the latest versions (next trial id, commit count).
 *   2. `verdict`: each commit's guards compared with what the database holds, in the order of
 *      commit-plan.ts's `verdict`: the study exists; its commit count is the one the caller
 *      loaded; its engine state's revision; the state of each trial it changes. The revision and
 *      the trials are read in the statement's snapshot, which may predate a commit that held the
 *      row lock while this statement waited for it: the snapshot's commit count (`seen`) then
 *      differs from the locked row's, and the commit is answered `retry` (group-commit.ts sends it
 *      again in the next group). A commit whose caller gave its commit count never needs that:
 *      if the count matches the locked row, nothing was committed since the caller loaded, so
 *      the snapshot has all of it.
 *   3. The writes of the commits found `committed`, each joined to that verdict: the snapshots,
 *      the trial changes (still guarded by state), the new trials (ids: the study's next id plus
 *      their offset), the evaluation rows, the studies' new generation, next id, commit count and
 *      state. A refused commit writes nothing and leaves the others alone.
 */
import type pg from 'pg';
import { commitGuards, commitWrites, type CommitWrites } from '../commit-plan.js';
import type { QueuedCommit, Settled } from '../group-commit.js';
import type { JsonValue } from '../storage.js';
import { pgInsertTrials, pgTrial, pgTrialUpdate, pgUpdateTrials } from '../trial-columns.js';

const COMMIT_GROUP = `WITH
  c AS (SELECT * FROM json_to_recordset($1) AS c(study_id text, expected_seq bigint, expected_revision integer)),
  locked AS (SELECT s.id, s.next_trial_id, s.commit_seq, clock_timestamp() AS locked_at FROM studies s
    WHERE s.id IN (SELECT study_id FROM c) ORDER BY s.id FOR UPDATE),
  seen AS (SELECT s.id, s.commit_seq FROM studies s WHERE s.id IN (SELECT study_id FROM c)),
  guarded AS (SELECT g.study_id, bool_and(t.state IS NOT DISTINCT FROM g.expected_state) AS ok
    FROM json_to_recordset($2) AS g(study_id text, trial_id integer, expected_state text)
    LEFT JOIN trials t ON t.study_id = g.study_id AND t.trial_id = g.trial_id GROUP BY g.study_id),
  verdict AS (SELECT c.study_id, l.next_trial_id, l.locked_at, CASE
      WHEN l.id IS NULL THEN 'study_not_found'
      WHEN c.expected_seq IS NOT NULL AND c.expected_seq <> l.commit_seq THEN 'revision_conflict'
      WHEN l.commit_seq <> seen.commit_seq THEN 'retry'
      WHEN (SELECT e.revision FROM engine_states e WHERE e.study_id = c.study_id ORDER BY e.revision DESC LIMIT 1) IS DISTINCT FROM c.expected_revision THEN 'revision_conflict'
      WHEN NOT COALESCE(gd.ok, true) THEN 'trial_conflict'
      ELSE 'committed' END AS outcome
    FROM c LEFT JOIN locked l ON l.id = c.study_id LEFT JOIN seen ON seen.id = c.study_id LEFT JOIN guarded gd ON gd.study_id = c.study_id),
  ok AS (SELECT study_id, next_trial_id FROM verdict WHERE outcome = 'committed'),
  st AS (INSERT INTO engine_states (study_id, generation, revision, version, state, created_at)
    SELECT x.study_id, x.generation, x.revision, x.version, x.state, x.created_at
      FROM json_to_recordset($3) AS x(study_id text, generation integer, revision integer, version integer, state json, created_at text)
      JOIN ok ON ok.study_id = x.study_id
    ON CONFLICT (study_id, generation) DO UPDATE SET revision = excluded.revision, version = excluded.version,
      state = excluded.state, created_at = excluded.created_at),
  up AS (${pgUpdateTrials('$4', ' JOIN ok ON ok.study_id = x.study_id')}),
  ins AS (${pgInsertTrials('$5', { from: ' JOIN ok ON ok.study_id = x.study_id', trialId: 'ok.next_trial_id + x.trial_id' })}),
  ev AS (INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
    SELECT x.study_id, x.completed_at, x.trial_id, x.idx, x.value, x.best_so_far, x.improved
      FROM json_to_recordset($6) AS x(study_id text, completed_at text, trial_id integer, idx integer, value float8, best_so_far float8, improved boolean)
      JOIN ok ON ok.study_id = x.study_id
    ON CONFLICT (study_id, completed_at, trial_id) DO UPDATE SET idx = excluded.idx, value = excluded.value,
      best_so_far = excluded.best_so_far, improved = excluded.improved),
  so AS (UPDATE studies s SET generation = x.generation, next_trial_id = ok.next_trial_id + x.new_trials, updated_at = x.updated_at,
      commit_seq = s.commit_seq + 1, state = COALESCE(x.state, s.state), reason = CASE WHEN x.state IS NULL THEN s.reason ELSE x.reason END
    FROM json_to_recordset($7) AS x(study_id text, generation integer, new_trials integer, updated_at text, state text, reason text)
    JOIN ok ON ok.study_id = x.study_id WHERE s.id = x.study_id)
SELECT study_id, outcome, next_trial_id, 1000 * extract(epoch FROM clock_timestamp() - locked_at)::float8 AS lock_ms FROM verdict`;

interface VerdictRow {
  study_id: string;
  outcome: 'committed' | 'study_not_found' | 'revision_conflict' | 'trial_conflict' | 'retry';
  next_trial_id: number | null;
  lock_ms: number | null;
}

/** Applies `group` (at most one commit per study) as one statement; `committed` gets each written commit's lock time. */
export async function applyGroup(db: pg.Pool | pg.PoolClient, group: readonly QueuedCommit[], committed: (lockMs: number) => void): Promise<Settled[]> {
  const commits: JsonValue[] = [];
  const guards: JsonValue[] = [];
  const writes = new Map<string, CommitWrites>();
  const failed = new Map<string, unknown>();
  for (const { studyId, commit } of group) {
    try {
      // Trial ids as offsets from the study's next id, which the statement reads under the lock.
      writes.set(studyId, commitWrites(studyId, commit, 0));
    } catch (error) {
      failed.set(studyId, error);
      continue;
    }
    commits.push({ study_id: studyId, expected_seq: commit.expectedCommitSeq ?? null, expected_revision: commit.expectedRevision });
    for (const t of commitGuards(commit).trials) guards.push({ study_id: studyId, trial_id: t.trialId, expected_state: t.expectedState });
  }
  const all = [...writes];
  const rows =
    commits.length === 0
      ? []
      : (
          await db.query<VerdictRow>({
            name: 'probnes_commit_group',
            text: COMMIT_GROUP,
            values: [
              JSON.stringify(commits),
              JSON.stringify(guards),
              JSON.stringify(all.flatMap(([s, w]) => (w.engineState ? [{ study_id: s, generation: w.engineState.generation, revision: w.engineState.revision, version: w.engineState.version, state: w.engineState.state, created_at: w.engineState.createdAt }] : []))),
              JSON.stringify(all.flatMap(([s, w]) => w.trialUpdates.map((u) => pgTrialUpdate(s, u.trialId, u.expectedState, u.change)))),
              JSON.stringify(all.flatMap(([, w]) => w.newTrials.map(pgTrial))),
              JSON.stringify(all.flatMap(([s, w]) => w.evaluations.map((e) => ({ study_id: s, completed_at: e.completedAt, trial_id: e.trialId, idx: e.index, value: e.value, best_so_far: e.bestSoFar, improved: e.improved })))),
              JSON.stringify(all.map(([s, w]) => ({ study_id: s, generation: w.study.generation, new_trials: w.newTrials.length, updated_at: w.study.updatedAt, state: w.study.state?.state ?? null, reason: w.study.state?.reason ?? null }))),
            ],
          })
        ).rows;
  const verdicts = new Map(rows.map((r) => [r.study_id, r]));
  return group.map(({ studyId }): Settled => {
    if (failed.has(studyId)) return { ok: false, error: failed.get(studyId) };
    const v = verdicts.get(studyId);
    if (!v) return { ok: false, error: new Error(`the commit statement returned no verdict for study ${studyId}`) };
    if (v.outcome === 'retry') return { retry: true };
    if (v.outcome !== 'committed') return { ok: true, result: { committed: false, reason: v.outcome } };
    committed(v.lock_ms ?? 0);
    const w = writes.get(studyId)!;
    return { ok: true, result: { committed: true, revision: w.revision, trialIds: w.newTrials.map((t) => v.next_trial_id! + t.trialId) } };
  });
}
