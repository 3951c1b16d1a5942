/**
 * The Storage contract on PostgreSQL, for several stateless replicas sharing one database.
 *
 * What one process serialises in memory (its per-study lock, study-lock.ts) is serialised here by
 * the database, and only for the few milliseconds of a write, never across an engine computation:
 * `commitGeneration` takes the study's row lock (SELECT ... FOR UPDATE), checks that nobody
 * committed since the caller loaded (engine-state revision and the study's commit count), then
 * writes the snapshot, the guarded trial updates and the new trials (ids from the study row, so
 * dense and never handed out twice) and commits (commit.ts). A caller that loses the race gets
 * `revision_conflict` or `trial_conflict`, reloads and recomputes (loop.ts); nothing is overwritten.
 *
 * A process groups the commits that queue behind one in flight into one transaction
 * (group-commit.ts), and concurrent COMMITs of any replicas share WAL flushes.
 *
 * Reads that must be one consistent state (the loop's load) are one statement, and so one
 * snapshot, even under READ COMMITTED; exports use a REPEATABLE READ transaction.
 */
import type pg from 'pg';
import { MigrationError, type Migration } from '../sqlite/migrate.js';
import {
  STUDY_STATES,
  type ApiKeyRecord,
  type CommitResult,
  type EngineStateRecord,
  type EvaluationRecord,
  type EvaluationsAround,
  type EvaluationSummary,
  type KeyedEvaluation,
  type GenerationCommit,
  type ImportedEngineState,
  type ImportedStudy,
  type ImportedTrial,
  type IntermediateCursor,
  type IntermediateRecord,
  type InitialEngineState,
  type LoopState,
  type LoopStateQuery,
  type NewApiKeyRecord,
  type NewStudyRecord,
  type OperationalCounts,
  type Page,
  type PageRequest,
  type PoolStats,
  StorageUnavailableError,
  type Storage,
  type StepPeer,
  type StorageHealth,
  type StudyPatch,
  type StudyRecord,
  type StudyState,
  type TrialRecord,
  type TrialState,
} from '../storage.js';
import { createPool, transaction, translate, type PostgresOptions } from './connection.js';
import { loadPostgresMigrations, migratePostgres, schemaVersion } from './migrate.js';
import { intermediateFromRow, stateFilter, type IntermediateRow } from '../rows.js';
import { GroupCommit, type QueuedCommit, type Settled } from '../group-commit.js';
import { pgInsertTrials, pgTrial } from '../trial-columns.js';
import { applyGroup } from './commit.js';
import { COUNTS_SQL, json, toEngineState, toKey, toStudy, toTrial, type EngineStateRow, type KeyRow, type StudyRow, type TrialRow } from './rows.js';

export interface PostgresStorageOptions extends PostgresOptions {
  migrations?: Migration[];
}

const READ_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** A study_evaluations row (migration 005; computed by the domain, written by the commit) and its record. */
interface EvaluationRow {
  idx: number;
  trial_id: number;
  value: number;
  best_so_far: number;
  improved: boolean;
}
const EVALUATION_COLUMNS = 'idx, trial_id, value, best_so_far, improved';
const toEvaluation = (r: EvaluationRow): EvaluationRecord => ({ index: r.idx, trialId: r.trial_id, value: r.value, bestSoFar: r.best_so_far, improved: r.improved });
type KeyedRow = EvaluationRow & { completed_at: string };
const toKeyed = (r: KeyedRow): KeyedEvaluation => ({ completedAt: r.completed_at, ...toEvaluation(r) });

/** Evaluation rows as the import's six arrays. */
function evaluationColumns(e: readonly KeyedEvaluation[]): unknown[] {
  return [e.map((x) => x.completedAt), e.map((x) => x.trialId), e.map((x) => x.index), e.map((x) => x.value), e.map((x) => x.bestSoFar), e.map((x) => x.improved)];
}

/** Evaluation rows of an import (a new study: nothing to replace). */
const INSERT_EVALUATIONS = `INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
  SELECT $1, u.* FROM unnest($2::text[], $3::int[], $4::int[], $5::float8[], $6::float8[], $7::bool[]) AS u`;

const INSERT_STUDY = `INSERT INTO studies (id, tenant_id, name, direction, parameters, prior, method, batch_size, options, seed,
    max_trials, lease_seconds, known_optimum, metadata, state, reason, generation, created_at, updated_at, loop_settings)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
  RETURNING *, NULL::json AS counts`;

function studyParams(s: NewStudyRecord, generation: number, updatedAt: string): unknown[] {
  return [
    s.id, s.tenantId, s.name, s.direction, json(s.parameters), json(s.prior), s.method, s.batchSize, json(s.options), s.seed, s.maxTrials, s.leaseSeconds,
    s.knownOptimum, json(s.metadata), s.state, s.reason, generation, s.createdAt, updatedAt, json(s.loopSettings ?? {}),
  ];
}

/** Intermediate values as parallel arrays for one INSERT ... SELECT FROM unnest; a step already stored is left as it is. */
const INSERT_INTERMEDIATE = `INSERT INTO intermediate_values (study_id, trial_id, step, value, created_at)
  SELECT $1, u.* FROM unnest($2::int[], $3::int[], $4::float8[], $5::text[]) AS u ON CONFLICT DO NOTHING`;

function intermediateColumns(studyId: string, records: readonly IntermediateRecord[]): unknown[] {
  return [studyId, records.map((r) => r.trialId), records.map((r) => r.step), records.map((r) => r.value), records.map((r) => r.createdAt)];
}

/** An import's trials, as one JSON array (trial-columns.ts). */
const INSERT_TRIALS = pgInsertTrials('$1');

const UPSERT_STATE = `INSERT INTO engine_states (study_id, generation, revision, version, state, created_at) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (study_id, generation) DO UPDATE SET revision = excluded.revision, version = excluded.version, state = excluded.state, created_at = excluded.created_at`;

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

/** The settings row that records whether the server demands keys ('keyed') or was opened again ('open'). */
const AUTH_MODE = 'auth_mode';
/** Records that the server demands keys (a key was created). */
const MARK_KEYED_SQL = `INSERT INTO settings (key, value) VALUES ('${AUTH_MODE}', 'keyed') ON CONFLICT (key) DO UPDATE SET value = 'keyed'`;
/** Keyed: an active key, or the recorded mode, or (no mode recorded: older databases) any key ever created. */
const IS_KEYED_SQL = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)
  OR COALESCE((SELECT value = 'keyed' FROM settings WHERE key = '${AUTH_MODE}'), EXISTS (SELECT 1 FROM api_keys)) AS keyed`;

export class PostgresStorage implements Storage {
  readonly kind = 'postgres' as const;
  private closed = false;
  private connectionErrors = 0;
  private readonly counts = { statements: 0, commits: 0, lockHeldMsSum: 0, lockHeldMsMax: 0 };
  private readonly countStatement = () => void this.counts.statements++;
  private readonly groups = new GroupCommit((group) => this.applyGroup(group));

  private constructor(
    private readonly pool: pg.Pool,
    private readonly expectedVersion: number,
    private readonly maxConnections: number,
  ) {
    // A pooled connection that dies while idle (pg_terminate_backend, a server restart) is reported
    // here and dropped by the pool; without a listener the process would crash.
    pool.on('error', () => void this.connectionErrors++);
  }

  /** Connects, applies the missing migrations under the advisory lock, and refuses a newer schema. */
  static async open(opts: PostgresStorageOptions): Promise<PostgresStorage> {
    const migrations = opts.migrations ?? loadPostgresMigrations();
    const pool = createPool(opts);
    pool.on('error', () => {}); // until the instance's own listener is attached
    try {
      await migratePostgres(pool, migrations);
    } catch (err) {
      await pool.end().catch(() => {});
      if (err instanceof MigrationError) throw err;
      throw translate(err);
    }
    return new PostgresStorage(pool, migrations.length, opts.poolSize ?? 10);
  }

  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, max: this.maxConnections, errors: this.connectionErrors, ...this.counts };
  }

  /** Runs one storage call, with driver errors as the contract names them. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const e = translate(err);
      if (e instanceof StorageUnavailableError) this.connectionErrors++;
      throw e;
    }
  }

  /**
   * One statement on a pooled connection. `name` makes it a prepared statement (parsed and planned
   * once per connection, then only bound and executed): used for the two statements every loop
   * request sends, where parsing the loop-state query was a visible share of the database's CPU.
   */
  private async rows<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], name?: string): Promise<R[]> {
    this.counts.statements++;
    return this.call(async () => (await this.pool.query<R>(name ? { name, text, values } : { text, values })).rows);
  }

  private tx<T>(begin: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.call(() => transaction(this.pool, begin, fn, this.countStatement));
  }

  async health(): Promise<StorageHealth> {
    if (this.closed) return { ok: false, schemaVersion: -1, expectedSchemaVersion: this.expectedVersion, detail: 'the database is closed' };
    try {
      const v = await schemaVersion(this.pool);
      return { ok: v === this.expectedVersion, schemaVersion: v, expectedSchemaVersion: this.expectedVersion };
    } catch (err) {
      return { ok: false, schemaVersion: -1, expectedSchemaVersion: this.expectedVersion, detail: `the database is unreachable: ${(err as Error).message}` };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async getSetting(key: string): Promise<string | null> {
    const [row] = await this.rows<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return row?.value ?? null;
  }

  createStudy(study: NewStudyRecord, initial?: InitialEngineState): Promise<StudyRecord> {
    // One transaction: a study is never visible without its generation-0 engine state.
    return this.tx('BEGIN', async (c) => {
      const row = (await c.query<StudyRow>(INSERT_STUDY, studyParams(study, 0, study.createdAt))).rows[0]!;
      if (initial) await c.query(UPSERT_STATE, [study.id, 0, 1, initial.version, json(initial.state), study.createdAt]);
      return toStudy(row);
    });
  }

  async getStudy(tenantId: string, studyId: string): Promise<StudyRecord | null> {
    const [row] = await this.rows<StudyRow>(`SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, studyId]);
    return row ? toStudy(row) : null;
  }

  async listStudies(tenantId: string, page: PageRequest): Promise<Page<StudyRecord>> {
    const after = page.after === null ? 0 : Number(page.after);
    // One extra row tells whether another page exists without a COUNT.
    const rows = await this.rows<StudyRow>(`SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.seq > $2 ORDER BY s.seq LIMIT $3`, [
      tenantId,
      Number.isSafeInteger(after) ? after : 0,
      page.limit + 1,
    ]);
    const more = rows.length > page.limit;
    const items = more ? rows.slice(0, page.limit) : rows;
    return { items: items.map(toStudy), next: more ? String(items[items.length - 1]!.seq) : null };
  }

  async updateStudy(tenantId: string, studyId: string, patch: StudyPatch): Promise<StudyRecord | null> {
    const values: unknown[] = [tenantId, studyId, patch.updatedAt];
    // A change of the study is a commit too: a loop request that loaded (or cached, LoopService's
    // warmSnapshots) the study before it must not commit on top of it (a PATCH to PAUSED, say).
    const sets = ['updated_at = $3', 'commit_seq = commit_seq + 1'];
    // Column names come from this fixed list, never from input.
    const fields: [keyof StudyPatch, string, (v: never) => unknown][] = [
      ['name', 'name', (v) => v],
      ['metadata', 'metadata', (v) => json(v)],
      ['state', 'state', (v) => v],
      ['reason', 'reason', (v) => v],
    ];
    for (const [key, column, encode] of fields) {
      if (patch[key] === undefined) continue;
      values.push(encode(patch[key] as never));
      sets.push(`${column} = $${values.length}`);
    }
    const [row] = await this.rows<StudyRow>(`UPDATE studies s SET ${sets.join(', ')} WHERE s.tenant_id = $1 AND s.id = $2 RETURNING s.*, ${COUNTS_SQL}`, values);
    return row ? toStudy(row) : null;
  }

  async deleteStudy(tenantId: string, studyId: string): Promise<boolean> {
    return this.call(async () => ((await this.pool.query('DELETE FROM studies WHERE tenant_id = $1 AND id = $2', [tenantId, studyId])).rowCount ?? 0) > 0);
  }

  async getEngineState(studyId: string, generation?: number): Promise<EngineStateRecord | null> {
    const [row] =
      generation === undefined
        ? await this.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 ORDER BY revision DESC LIMIT 1', [studyId])
        : await this.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 AND generation = $2', [studyId, generation]);
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
    this.counts.statements++;
    return this.call(() =>
      applyGroup(this.pool, group, (lockMs) => {
        this.counts.commits++;
        this.counts.lockHeldMsSum += lockMs;
        this.counts.lockHeldMsMax = Math.max(this.counts.lockHeldMsMax, lockMs);
      }),
    );
  }

  async getTrial(studyId: string, trialId: number): Promise<TrialRecord | null> {
    const [row] = await this.rows<TrialRow>('SELECT * FROM trials WHERE study_id = $1 AND trial_id = $2', [studyId, trialId]);
    return row ? toTrial(row) : null;
  }

  async listTrials(studyId: string, q: PageRequest & { state?: TrialState; now?: string }): Promise<Page<TrialRecord>> {
    const after = q.after === null ? 0 : Number(q.after);
    const values: unknown[] = [studyId, Number.isSafeInteger(after) ? after : 0, q.limit + 1];
    const where = stateFilter(q.state, q.now, (v) => `$${values.push(v)}`);
    const rows = await this.rows<TrialRow>(`SELECT * FROM trials WHERE study_id = $1 AND trial_id > $2 ${where} ORDER BY trial_id LIMIT $3`, values);
    const more = rows.length > q.limit;
    const items = (more ? rows.slice(0, q.limit) : rows).map(toTrial);
    return { items, next: more ? String(items[items.length - 1]!.trialId) : null };
  }

  async loadLoopState(tenantId: string, studyId: string, query: LoopStateQuery): Promise<LoopState | null> {
    const [row] = await this.rows<{ study: StudyRow | null; head: HeadRow | null; last_evaluation: KeyedRow | null; trials: TrialRow[] | null }>(LOOP_STATE, [tenantId, studyId, query.knownRevision, [...query.trialIds]], 'probnes_loop_state');
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
    return (await this.rows<TrialRow>("SELECT * FROM trials WHERE study_id = $1 AND state = 'COMPLETED' ORDER BY completed_at, trial_id", [studyId])).map(toTrial);
  }

  async listCompletedTrialsAfter(studyId: string, position: number, trialIdAt: number): Promise<TrialRecord[]> {
    // One statement, so one snapshot: a range of study_evaluations_idx, each trial by primary key.
    const rows = await this.rows<TrialRow>(
      `SELECT t.* FROM study_evaluations e JOIN trials t ON t.study_id = e.study_id AND t.trial_id = e.trial_id
        WHERE e.study_id = $1 AND e.idx > $2
          AND ($2 = 0 OR EXISTS (SELECT 1 FROM study_evaluations c WHERE c.study_id = $1 AND c.idx = $2 AND c.trial_id = $3))
        ORDER BY e.idx`,
      [studyId, position, trialIdAt],
    );
    return rows.map(toTrial);
  }

  async listAllTrials(studyId: string): Promise<TrialRecord[]> {
    return (await this.rows<TrialRow>('SELECT * FROM trials WHERE study_id = $1 ORDER BY trial_id', [studyId])).map(toTrial);
  }

  async listRecentCompleted(studyId: string, q: { limit: number; completedBy: string | null }): Promise<TrialRecord[]> {
    // Backwards along study_evaluations' key from `completedBy`, then each trial by primary key.
    const rows = await this.rows<TrialRow>(
      `SELECT t.* FROM (SELECT trial_id, completed_at FROM study_evaluations WHERE study_id = $1 AND ($2::text IS NULL OR completed_at <= $2::text)
        ORDER BY completed_at DESC, trial_id DESC LIMIT $3) e JOIN trials t ON t.study_id = $1 AND t.trial_id = e.trial_id ORDER BY e.completed_at, e.trial_id`,
      [studyId, q.completedBy, q.limit],
    );
    return rows.map(toTrial);
  }

  async listEngineStates(studyId: string): Promise<EngineStateRecord[]> {
    return (await this.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 ORDER BY generation', [studyId])).map(toEngineState);
  }

  exportStudy(tenantId: string, studyId: string): Promise<{ study: StudyRecord; trials: TrialRecord[]; engineStates: EngineStateRecord[]; intermediate: IntermediateRecord[] } | null> {
    // One snapshot for the three reads, so that no commit lands between the study and its trials.
    return this.tx(READ_SNAPSHOT, async (c) => {
      const [study] = (await c.query<StudyRow>(`SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, studyId])).rows;
      if (!study) return null;
      const trials = (await c.query<TrialRow>('SELECT * FROM trials WHERE study_id = $1 ORDER BY trial_id', [studyId])).rows.map(toTrial);
      const engineStates = (await c.query<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 ORDER BY generation', [studyId])).rows.map(toEngineState);
      const intermediate = (await c.query<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 ORDER BY trial_id, step', [studyId])).rows.map(intermediateFromRow);
      return { study: toStudy(study), trials, engineStates, intermediate };
    });
  }

  importStudy(s: ImportedStudy, trials: ImportedTrial[], states: ImportedEngineState[], intermediate: IntermediateRecord[], evaluations: KeyedEvaluation[]): Promise<StudyRecord> {
    return this.tx('BEGIN', async (c) => {
      await c.query(INSERT_STUDY, studyParams(s, s.generation, s.updatedAt));
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
      // The commit count starts at the time in microseconds, not 0: a study imported under the id of
      // a deleted one must not match a count that a replica cached for the deleted one (warm snapshots).
      const row = (
        await c.query<StudyRow>(`UPDATE studies s SET next_trial_id = $2, commit_seq = (extract(epoch FROM clock_timestamp()) * 1000000)::bigint WHERE s.id = $1 RETURNING s.*, ${COUNTS_SQL}`, [
          s.id,
          nextTrialId,
        ])
      ).rows[0]!;
      return toStudy(row);
    });
  }

  async recordIntermediate(studyId: string, r: IntermediateRecord): Promise<{ inserted: boolean; record: IntermediateRecord }> {
    // One statement: the insert, or the row that was there (an autocommitted statement is durable when it returns).
    const [row] = await this.rows<IntermediateRow & { inserted: boolean }>(
      `WITH ins AS (${INSERT_INTERMEDIATE} RETURNING trial_id, step, value, created_at)
       SELECT trial_id, step, value, created_at, true AS inserted FROM ins
       UNION ALL SELECT trial_id, step, value, created_at, false FROM intermediate_values
         WHERE study_id = $1 AND trial_id = $2[1] AND step = $3[1] AND NOT EXISTS (SELECT 1 FROM ins)`,
      intermediateColumns(studyId, [r]),
    );
    if (row) return { inserted: row.inserted, record: intermediateFromRow(row) };
    // The conflicting row was written by a transaction that committed after this statement's snapshot: read it now.
    const [again] = await this.rows<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 AND trial_id = $2 AND step = $3', [studyId, r.trialId, r.step]);
    return { inserted: false, record: intermediateFromRow(again!) };
  }

  async listIntermediate(studyId: string, trialIds?: readonly number[]): Promise<IntermediateRecord[]> {
    const rows =
      trialIds === undefined
        ? await this.rows<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 ORDER BY trial_id, step', [studyId])
        : await this.rows<IntermediateRow>('SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 AND trial_id = ANY($2::int[]) ORDER BY trial_id, step', [studyId, [...trialIds]]);
    return rows.map(intermediateFromRow);
  }

  async listIntermediatePage(studyId: string, q: { after: IntermediateCursor | null; limit: number }): Promise<IntermediateRecord[]> {
    const after = q.after ?? { trialId: 0, step: -1 };
    // A row comparison on the primary key's columns: one index range from the cursor.
    const rows = await this.rows<IntermediateRow>(
      'SELECT trial_id, step, value, created_at FROM intermediate_values WHERE study_id = $1 AND (trial_id, step) > ($2, $3) ORDER BY trial_id, step LIMIT $4',
      [studyId, after.trialId, after.step, q.limit],
    );
    return rows.map(intermediateFromRow);
  }

  async stepPeers(studyId: string, step: number): Promise<StepPeer[]> {
    // From the (study, step) index, each value joined to its trial by primary key.
    const rows = await this.rows<{ trial_id: number; failure_reason: string | null; value: number }>(
      `SELECT i.trial_id, t.failure_reason, i.value FROM intermediate_values i
         JOIN trials t ON t.study_id = i.study_id AND t.trial_id = i.trial_id
       WHERE i.study_id = $1 AND i.step = $2 AND t.state = 'COMPLETED' ORDER BY i.trial_id`,
      [studyId, step],
    );
    return rows.map((r) => ({ trialId: r.trial_id, failureReason: r.failure_reason, value: r.value }));
  }

  async countCompleted(studyId: string, q: { exceptFailureReason: string; atMost: number }): Promise<number> {
    const [row] = await this.rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM trials
         WHERE study_id = $1 AND state = 'COMPLETED' AND failure_reason IS DISTINCT FROM $2 LIMIT $3) c`,
      [studyId, q.exceptFailureReason, q.atMost],
    );
    return row!.n;
  }

  async intermediateRange(studyId: string, trialId: number, throughStep: number): Promise<{ min: number; max: number } | null> {
    const [row] = await this.rows<{ lo: number | null; hi: number | null }>(
      'SELECT min(value) AS lo, max(value) AS hi FROM intermediate_values WHERE study_id = $1 AND trial_id = $2 AND step <= $3',
      [studyId, trialId, throughStep],
    );
    return row!.lo === null || row!.hi === null ? null : { min: row!.lo, max: row!.hi };
  }

  async evaluationSummary(studyId: string): Promise<EvaluationSummary> {
    const [row] = await this.rows<{ n: number | null; best: EvaluationRow | null }>(
      `SELECT (SELECT MAX(idx) FROM study_evaluations WHERE study_id = $1) AS n,
        (SELECT row_to_json(e) FROM (SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND improved ORDER BY idx DESC LIMIT 1) e) AS best`,
      [studyId],
    );
    return { count: row?.n ?? 0, best: row?.best ? toEvaluation(row.best) : null };
  }

  async evaluationsAround(studyId: string, key: { completedAt: string; trialId: number }): Promise<EvaluationsAround> {
    // One statement, so one snapshot: backwards and forwards along the primary key from the key.
    const [row] = await this.rows<{ before: KeyedRow | null; after: KeyedRow[] | null }>(
      `SELECT (SELECT row_to_json(b) FROM (SELECT completed_at, ${EVALUATION_COLUMNS} FROM study_evaluations
                 WHERE study_id = $1 AND (completed_at, trial_id) < ($2::text COLLATE "C", $3::int) ORDER BY completed_at DESC, trial_id DESC LIMIT 1) b) AS before,
         (SELECT json_agg(a ORDER BY a.completed_at, a.trial_id) FROM (SELECT completed_at, ${EVALUATION_COLUMNS} FROM study_evaluations
                 WHERE study_id = $1 AND (completed_at, trial_id) >= ($2::text COLLATE "C", $3::int)) a) AS after`,
      [studyId, key.completedAt, key.trialId],
    );
    return { before: row?.before ? toKeyed(row.before) : null, after: (row?.after ?? []).map(toKeyed) };
  }

  async listEvaluations(studyId: string, q: { afterIndex: number; limit: number }): Promise<EvaluationRecord[]> {
    return (await this.rows<EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND idx > $2 ORDER BY idx LIMIT $3`, [studyId, q.afterIndex, q.limit])).map(toEvaluation);
  }

  async evaluationsAt(studyId: string, indices: readonly number[]): Promise<EvaluationRecord[]> {
    if (indices.length === 0) return [];
    return (await this.rows<EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND idx = ANY($2::int[]) ORDER BY idx`, [studyId, [...indices]])).map(toEvaluation);
  }

  async listBestSteps(studyId: string, q: { afterIndex: number; throughIndex: number; limit: number }): Promise<EvaluationRecord[]> {
    return (
      await this.rows<EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM study_evaluations WHERE study_id = $1 AND improved AND idx > $2 AND idx <= $3 ORDER BY idx LIMIT $4`, [
        studyId,
        q.afterIndex,
        q.throughIndex,
        q.limit,
      ])
    ).map(toEvaluation);
  }

  async listEngineStatesPage(studyId: string, q: { afterGeneration: number; limit: number }): Promise<EngineStateRecord[]> {
    return (await this.rows<EngineStateRow>('SELECT * FROM engine_states WHERE study_id = $1 AND generation > $2 ORDER BY generation LIMIT $3', [studyId, q.afterGeneration, q.limit])).map(toEngineState);
  }

  async expiredLeaseCounts(studyIds: readonly string[], now: string): Promise<Record<string, number>> {
    if (studyIds.length === 0) return {};
    const rows = await this.rows<{ study_id: string; n: number }>(
      "SELECT study_id, COUNT(*)::int AS n FROM trials WHERE study_id = ANY($1::text[]) AND state = 'ACTIVE' AND lease_expires_at <= $2 GROUP BY study_id",
      [[...studyIds], now],
    );
    return Object.fromEntries(rows.map((r) => [r.study_id, r.n]));
  }

  async operationalCounts(now: string): Promise<OperationalCounts> {
    const studiesByState = Object.fromEntries(STUDY_STATES.map((s) => [s, 0])) as Record<StudyState, number>;
    for (const r of await this.rows<{ state: StudyState; n: number }>('SELECT state, COUNT(*) AS n FROM studies GROUP BY state')) studiesByState[r.state] = r.n;
    // ISO-8601 UTC strings of one format compare like the instants they name (the column is COLLATE "C").
    const [leases] = await this.rows<{ n: number }>("SELECT COUNT(*) AS n FROM trials WHERE state = 'ACTIVE' AND lease_expires_at > $1", [now]);
    return { studiesByState, openLeases: leases?.n ?? 0 };
  }

  createApiKey(key: NewApiKeyRecord): Promise<ApiKeyRecord> {
    // The tenant is created with its first key, in the same transaction.
    return this.tx('BEGIN', async (c) => {
      await c.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $1, $2) ON CONFLICT (id) DO NOTHING', [key.tenantId, key.createdAt]);
      const r = await c.query<KeyRow>('INSERT INTO api_keys (id, tenant_id, key_hash, label, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *', [
        key.id,
        key.tenantId,
        key.keyHash,
        key.label,
        key.createdAt,
      ]);
      await c.query(MARK_KEYED_SQL);
      return toKey(r.rows[0]!);
    });
  }

  async findActiveApiKey(keyHash: string): Promise<ApiKeyRecord | null> {
    // Revoked keys are filtered here, so no caller can forget to.
    const [row] = await this.rows<KeyRow>('SELECT * FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [keyHash]);
    return row ? toKey(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return (await this.rows<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKey);
  }

  async revokeApiKey(id: string, revokedAt: string): Promise<boolean> {
    return this.call(async () => (await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [revokedAt, id])).rowCount === 1);
  }

  async hasActiveApiKeys(): Promise<boolean> {
    return (await this.rows('SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1')).length > 0;
  }

  async isKeyed(): Promise<boolean> {
    const [row] = await this.rows<{ keyed: boolean }>(IS_KEYED_SQL);
    return row?.keyed === true;
  }

  async markKeyed(): Promise<void> {
    await this.rows(MARK_KEYED_SQL);
  }

  async reopenWithoutKeys(): Promise<boolean> {
    // One statement: the mode is written only if no unrevoked key exists at that moment. A key
    // created concurrently still keeps the server keyed while it is active (isKeyed checks both).
    const r = await this.rows<{ key: string }>(
      `INSERT INTO settings (key, value) SELECT '${AUTH_MODE}', 'open' WHERE NOT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)
       ON CONFLICT (key) DO UPDATE SET value = 'open' RETURNING key`,
    );
    return r.length === 1;
  }

  async ensureTenant(id: string, createdAt: string): Promise<void> {
    await this.rows('INSERT INTO tenants (id, name, created_at) VALUES ($1, $1, $2) ON CONFLICT (id) DO NOTHING', [id, createdAt]);
  }
}
