/** The loop on PostgreSQL (LoopStore): its one-statement read, its grouped commit (commit.ts), and the trials and engine states it works on. */
import {
  type CommitResult,
  type EngineStateRecord,
  type GenerationCommit,
  type LoopState,
  type LoopStateQuery,
  type Page,
  type PageRequest,
  type TrialRecord,
  type TrialState,
} from '../storage.js';
import type { PgDb } from './db.js';
import { COUNTS_SQL, toEngineState, toStudy, toTrial, type EngineStateRow, type StudyRow, type TrialRow, EVALUATION_COLUMNS, toKeyed, type KeyedRow } from './rows.js';
import { stateFilter } from '../rows.js';
import { GroupCommit, type QueuedCommit, type Settled } from '../group-commit.js';
import { applyGroup } from './commit.js';

/**
 * The loop's read, as one statement (one snapshot, one round trip): the study with its counts, the
 * head engine state (its JSON only when the caller does not hold that revision), and the trials a
 * request can touch, each set read through its own index (live states, the head generation's
 * suggested trials, the named ids) before the rows themselves are fetched by primary key; and the
 * study's last evaluation (one seek of study_evaluations_idx).
 */
const LOOP_STATE = `WITH s AS (SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.id = $2),
  h AS (SELECT e.revision, e.generation, e.version, e.created_at, CASE WHEN e.revision IS DISTINCT FROM $3::int THEN e.state END AS state
        FROM engine_states e WHERE e.study_id = $2 ORDER BY e.revision DESC LIMIT 1)
SELECT (SELECT row_to_json(s) FROM s) AS study,
  (SELECT row_to_json(h) FROM h) AS head,
  (SELECT row_to_json(e) FROM (SELECT completed_at, ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $2 ORDER BY idx DESC LIMIT 1) e) AS last_evaluation,
  (SELECT json_agg(t ORDER BY t.trial_id) FROM trials t WHERE EXISTS (SELECT 1 FROM s) AND t.study_id = $2 AND t.trial_id IN (
     SELECT trial_id FROM trials WHERE study_id = $2 AND state IN ('REQUESTED', 'ACTIVE')
     UNION ALL SELECT trial_id FROM trials WHERE study_id = $2 AND source = 'suggested'
       AND generation = COALESCE((SELECT generation FROM h), (SELECT generation FROM s))
     UNION ALL SELECT unnest($4::int[]))) AS trials`;

interface HeadRow {
  revision: number;
  generation: number;
  version: number;
  created_at: string;
  state: EngineStateRecord['state'] | null;
}

export class LoopRepo {
  private readonly groups = new GroupCommit((group) => this.applyGroup(group));

  constructor(private readonly db: PgDb) {}

  async getEngineState(studyId: string, generation?: number): Promise<EngineStateRecord | null> {
    const [row] =
      generation === undefined
        ? await this.db.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 ORDER BY revision DESC LIMIT 1', [studyId])
        : await this.db.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 AND generation = $2', [studyId, generation]);
    return row ? toEngineState(row) : null;
  }

  /**
   * The loop's commit, grouped (group-commit.ts): a commit that finds none of this process's in
   * flight goes out at once; those that arrive meanwhile go out together when it returns, as one
   * statement and one transaction (commit.ts: the studies' row locks, the checks, the writes), each
   * with its own checks and outcome. Every commit is answered only after that statement has
   * committed. The time each written commit's row lock was held (its grant to the statement's end)
   * goes to /metrics.
   */
  commitGeneration(studyId: string, c: GenerationCommit): Promise<CommitResult> {
    return this.groups.submit(studyId, c);
  }

  private applyGroup(group: readonly QueuedCommit[]): Promise<Settled[]> {
    this.db.counts.statements++;
    return this.db.call(() =>
      applyGroup(this.db.pool, group, (lockMs) => {
        this.db.counts.commits++;
        this.db.counts.lockHeldMsSum += lockMs;
        this.db.counts.lockHeldMsMax = Math.max(this.db.counts.lockHeldMsMax, lockMs);
      }),
    );
  }

  async getTrial(studyId: string, trialId: number): Promise<TrialRecord | null> {
    const [row] = await this.db.rows<TrialRow>('SELECT * FROM trials WHERE study_id = $1 AND trial_id = $2', [studyId, trialId]);
    return row ? toTrial(row) : null;
  }

  async listTrials(studyId: string, q: PageRequest & { state?: TrialState; now?: string }): Promise<Page<TrialRecord>> {
    const after = q.after === null ? 0 : Number(q.after);
    const values: unknown[] = [studyId, Number.isSafeInteger(after) ? after : 0, q.limit + 1];
    const where = stateFilter(q.state, q.now, (v) => `$${values.push(v)}`);
    const rows = await this.db.rows<TrialRow>(`SELECT * FROM trials WHERE study_id = $1 AND trial_id > $2 ${where} ORDER BY trial_id LIMIT $3`, values);
    const more = rows.length > q.limit;
    const items = (more ? rows.slice(0, q.limit) : rows).map(toTrial);
    return { items, next: more ? String(items[items.length - 1]!.trialId) : null };
  }

  async loadLoopState(tenantId: string, studyId: string, query: LoopStateQuery): Promise<LoopState | null> {
    const [row] = await this.db.rows<{ study: StudyRow | null; head: HeadRow | null; last_evaluation: KeyedRow | null; trials: TrialRow[] | null }>(LOOP_STATE, [tenantId, studyId, query.knownRevision, [...query.trialIds]], 'probnes_loop_state');
    if (!row?.study) return null;
    const { head } = row;
    return {
      study: toStudy(row.study),
      revision: head?.revision ?? null,
      engineState: head && head.state !== null ? { studyId, generation: head.generation, revision: head.revision, version: head.version, state: head.state, createdAt: head.created_at } : null,
      nextTrialId: row.study.next_trial_id,
      commitSeq: row.study.commit_seq,
      lastEvaluation: row.last_evaluation ? toKeyed(row.last_evaluation) : null,
      trials: (row.trials ?? []).map(toTrial),
    };
  }

  async listCompletedTrials(studyId: string): Promise<TrialRecord[]> {
    return (await this.db.rows<TrialRow>("SELECT * FROM trials WHERE study_id = $1 AND state = 'COMPLETED' ORDER BY completed_at, trial_id", [studyId])).map(toTrial);
  }

  async listCompletedTrialsAfter(studyId: string, position: number, trialIdAt: number): Promise<TrialRecord[]> {
    // One statement, so one snapshot: a range of study_evaluations_idx, each trial by primary key.
    const rows = await this.db.rows<TrialRow>(
      `SELECT t.* FROM study_evaluations e JOIN trials t ON t.study_id = e.study_id AND t.trial_id = e.trial_id
        WHERE e.study_id = $1 AND e.idx > $2
          AND ($2 = 0 OR EXISTS (SELECT 1 FROM study_evaluations c WHERE c.study_id = $1 AND c.idx = $2 AND c.trial_id = $3))
        ORDER BY e.idx`,
      [studyId, position, trialIdAt],
    );
    return rows.map(toTrial);
  }
}
