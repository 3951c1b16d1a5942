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
import type { PoolStats, Storage, StorageHealth } from '../storage.js';
import { createPool, translate, type PostgresOptions } from './connection.js';
import { loadPostgresMigrations, migratePostgres, schemaVersion } from './migrate.js';
import { PgDb } from './db.js';
import { IntermediateRepo } from './intermediate-repo.js';
import { KeysRepo } from './keys-repo.js';
import { LoopRepo } from './loop-repo.js';
import { ReportsRepo } from './reports-repo.js';
import { StudiesRepo } from './studies-repo.js';
import { SummariesRepo } from './summaries-repo.js';

export interface PostgresStorageOptions extends PostgresOptions {
  migrations?: Migration[];
}

/** The Storage port on PostgreSQL: one repository per aggregate (as SQLite's), sharing one pool (db.ts). */
export class PostgresStorage implements Storage {
  readonly kind = 'postgres' as const;
  private closed = false;
  private readonly db: PgDb;
  private readonly studies: StudiesRepo;
  private readonly loop: LoopRepo;
  private readonly reports: ReportsRepo;
  private readonly intermediate: IntermediateRepo;
  private readonly summaries: SummariesRepo;
  private readonly keys: KeysRepo;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly expectedVersion: number,
    private readonly maxConnections: number,
  ) {
    const db = (this.db = new PgDb(pool));
    // A pooled connection that dies while idle (pg_terminate_backend, a server restart) is reported
    // here and dropped by the pool; without a listener the process would crash.
    pool.on('error', () => void db.connectionErrors++);
    this.studies = new StudiesRepo(db);
    this.loop = new LoopRepo(db);
    this.reports = new ReportsRepo(db);
    this.intermediate = new IntermediateRepo(db);
    this.summaries = new SummariesRepo(db);
    this.keys = new KeysRepo(db);
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
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, max: this.maxConnections, errors: this.db.connectionErrors, ...this.db.counts };
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
    const [row] = await this.db.rows<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return row?.value ?? null;
  }

  createStudy(...a: Parameters<Storage['createStudy']>): ReturnType<Storage['createStudy']> {
    return this.studies.createStudy(...a);
  }

  getStudy(...a: Parameters<Storage['getStudy']>): ReturnType<Storage['getStudy']> {
    return this.studies.getStudy(...a);
  }

  listStudies(...a: Parameters<Storage['listStudies']>): ReturnType<Storage['listStudies']> {
    return this.studies.listStudies(...a);
  }

  updateStudy(...a: Parameters<Storage['updateStudy']>): ReturnType<Storage['updateStudy']> {
    return this.studies.updateStudy(...a);
  }

  deleteStudy(...a: Parameters<Storage['deleteStudy']>): ReturnType<Storage['deleteStudy']> {
    return this.studies.deleteStudy(...a);
  }

  getEngineState(...a: Parameters<Storage['getEngineState']>): ReturnType<Storage['getEngineState']> {
    return this.loop.getEngineState(...a);
  }

  commitGeneration(...a: Parameters<Storage['commitGeneration']>): ReturnType<Storage['commitGeneration']> {
    return this.loop.commitGeneration(...a);
  }

  getTrial(...a: Parameters<Storage['getTrial']>): ReturnType<Storage['getTrial']> {
    return this.loop.getTrial(...a);
  }

  listTrials(...a: Parameters<Storage['listTrials']>): ReturnType<Storage['listTrials']> {
    return this.loop.listTrials(...a);
  }

  loadLoopState(...a: Parameters<Storage['loadLoopState']>): ReturnType<Storage['loadLoopState']> {
    return this.loop.loadLoopState(...a);
  }

  listCompletedTrials(...a: Parameters<Storage['listCompletedTrials']>): ReturnType<Storage['listCompletedTrials']> {
    return this.loop.listCompletedTrials(...a);
  }

  listCompletedTrialsAfter(...a: Parameters<Storage['listCompletedTrialsAfter']>): ReturnType<Storage['listCompletedTrialsAfter']> {
    return this.loop.listCompletedTrialsAfter(...a);
  }

  listAllTrials(...a: Parameters<Storage['listAllTrials']>): ReturnType<Storage['listAllTrials']> {
    return this.reports.listAllTrials(...a);
  }

  listRecentCompleted(...a: Parameters<Storage['listRecentCompleted']>): ReturnType<Storage['listRecentCompleted']> {
    return this.reports.listRecentCompleted(...a);
  }

  listEngineStates(...a: Parameters<Storage['listEngineStates']>): ReturnType<Storage['listEngineStates']> {
    return this.reports.listEngineStates(...a);
  }

  exportStudy(...a: Parameters<Storage['exportStudy']>): ReturnType<Storage['exportStudy']> {
    return this.reports.exportStudy(...a);
  }

  importStudy(...a: Parameters<Storage['importStudy']>): ReturnType<Storage['importStudy']> {
    return this.reports.importStudy(...a);
  }

  recordIntermediate(...a: Parameters<Storage['recordIntermediate']>): ReturnType<Storage['recordIntermediate']> {
    return this.intermediate.recordIntermediate(...a);
  }

  listIntermediate(...a: Parameters<Storage['listIntermediate']>): ReturnType<Storage['listIntermediate']> {
    return this.intermediate.listIntermediate(...a);
  }

  listIntermediatePage(...a: Parameters<Storage['listIntermediatePage']>): ReturnType<Storage['listIntermediatePage']> {
    return this.intermediate.listIntermediatePage(...a);
  }

  stepPeers(...a: Parameters<Storage['stepPeers']>): ReturnType<Storage['stepPeers']> {
    return this.intermediate.stepPeers(...a);
  }

  countCompleted(...a: Parameters<Storage['countCompleted']>): ReturnType<Storage['countCompleted']> {
    return this.intermediate.countCompleted(...a);
  }

  intermediateRange(...a: Parameters<Storage['intermediateRange']>): ReturnType<Storage['intermediateRange']> {
    return this.intermediate.intermediateRange(...a);
  }

  evaluationSummary(...a: Parameters<Storage['evaluationSummary']>): ReturnType<Storage['evaluationSummary']> {
    return this.summaries.evaluationSummary(...a);
  }

  evaluationsAround(...a: Parameters<Storage['evaluationsAround']>): ReturnType<Storage['evaluationsAround']> {
    return this.summaries.evaluationsAround(...a);
  }

  listEvaluations(...a: Parameters<Storage['listEvaluations']>): ReturnType<Storage['listEvaluations']> {
    return this.summaries.listEvaluations(...a);
  }

  evaluationsAt(...a: Parameters<Storage['evaluationsAt']>): ReturnType<Storage['evaluationsAt']> {
    return this.summaries.evaluationsAt(...a);
  }

  listBestSteps(...a: Parameters<Storage['listBestSteps']>): ReturnType<Storage['listBestSteps']> {
    return this.summaries.listBestSteps(...a);
  }

  listEngineStatesPage(...a: Parameters<Storage['listEngineStatesPage']>): ReturnType<Storage['listEngineStatesPage']> {
    return this.summaries.listEngineStatesPage(...a);
  }

  expiredLeaseCounts(...a: Parameters<Storage['expiredLeaseCounts']>): ReturnType<Storage['expiredLeaseCounts']> {
    return this.summaries.expiredLeaseCounts(...a);
  }

  operationalCounts(...a: Parameters<Storage['operationalCounts']>): ReturnType<Storage['operationalCounts']> {
    return this.summaries.operationalCounts(...a);
  }

  createApiKey(...a: Parameters<Storage['createApiKey']>): ReturnType<Storage['createApiKey']> {
    return this.keys.createApiKey(...a);
  }

  findActiveApiKey(...a: Parameters<Storage['findActiveApiKey']>): ReturnType<Storage['findActiveApiKey']> {
    return this.keys.findActiveApiKey(...a);
  }

  listApiKeys(...a: Parameters<Storage['listApiKeys']>): ReturnType<Storage['listApiKeys']> {
    return this.keys.listApiKeys(...a);
  }

  revokeApiKey(...a: Parameters<Storage['revokeApiKey']>): ReturnType<Storage['revokeApiKey']> {
    return this.keys.revokeApiKey(...a);
  }

  hasActiveApiKeys(...a: Parameters<Storage['hasActiveApiKeys']>): ReturnType<Storage['hasActiveApiKeys']> {
    return this.keys.hasActiveApiKeys(...a);
  }

  isKeyed(...a: Parameters<Storage['isKeyed']>): ReturnType<Storage['isKeyed']> {
    return this.keys.isKeyed(...a);
  }

  reopenWithoutKeys(...a: Parameters<Storage['reopenWithoutKeys']>): ReturnType<Storage['reopenWithoutKeys']> {
    return this.keys.reopenWithoutKeys(...a);
  }

  markKeyed(...a: Parameters<Storage['markKeyed']>): ReturnType<Storage['markKeyed']> {
    return this.keys.markKeyed(...a);
  }

  ensureTenant(...a: Parameters<Storage['ensureTenant']>): ReturnType<Storage['ensureTenant']> {
    return this.keys.ensureTenant(...a);
  }
}
