/**
 * The embedded Storage: one better-sqlite3 connection per process. Its calls are synchronous and
 * short (single-digit milliseconds for the units of work here), so they run on the event loop and
 * are exposed as resolved Promises to keep the contract the same as an asynchronous database's.
 */
import { STUDY_STATES, type LoopState, type LoopStateQuery, type OperationalCounts, type Storage, type StorageHealth, type StudyState } from '../storage.js';
import { openDatabase, type OpenOptions, type SqliteDatabase } from './connection.js';
import { loadMigrations, migrate, schemaVersion, type Migration } from './migrate.js';
import { CommitThread } from './commit-thread.js';
import { IntermediateRepo } from './intermediate-repo.js';
import { KeysRepo } from './keys-repo.js';
import { ReportsRepo } from './reports-repo.js';
import { StudiesRepo } from './studies-repo.js';
import { SummariesRepo } from './summaries-repo.js';
import { TrialsRepo } from './trials-repo.js';

export interface SqliteStorageOptions extends OpenOptions {
  migrations?: Migration[];
  /**
   * Write the loop's commits on a thread of their own (commit-thread.ts) so the fsync of each
   * commit never blocks the event loop. Default: on for a database file, off for ':memory:'
   * (another connection could not see that database).
   */
  writerThread?: boolean;
}

export class SqliteStorage implements Storage {
  readonly kind = 'sqlite' as const;
  private readonly studies: StudiesRepo;
  private readonly trials: TrialsRepo;
  private readonly reports: ReportsRepo;
  private readonly keys: KeysRepo;
  private readonly summaries: SummariesRepo;
  private readonly intermediate: IntermediateRepo;
  private closed = false;
  private readonly loopStateTx;
  private readonly nextTrialIdStmt;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly expectedVersion: number,
    private readonly writer: CommitThread | null,
  ) {
    this.studies = new StudiesRepo(db);
    this.trials = new TrialsRepo(db);
    this.intermediate = new IntermediateRepo(db);
    this.reports = new ReportsRepo(db, this.studies, this.intermediate);
    this.keys = new KeysRepo(db);
    this.summaries = new SummariesRepo(db);
    this.nextTrialIdStmt = db.prepare<[string], { next_trial_id: number; commit_seq: number }>('SELECT next_trial_id, commit_seq FROM studies WHERE id = ?');
    // A read transaction: the study, its counts, its engine state and its trials as of one commit.
    this.loopStateTx = db.transaction((tenantId: string, studyId: string, q: LoopStateQuery): LoopState | null => {
      const study = this.studies.get(tenantId, studyId);
      if (!study) return null;
      const head = this.trials.head(studyId);
      const engineState = head && head.revision !== q.knownRevision ? this.trials.engineState(studyId) : null;
      const seq = this.nextTrialIdStmt.get(studyId)!;
      return {
        study,
        revision: head?.revision ?? null,
        engineState,
        nextTrialId: seq.next_trial_id,
        commitSeq: seq.commit_seq,
        lastEvaluation: this.summaries.last(studyId),
        trials: this.trials.loopTrials(studyId, head?.generation ?? study.generation, q.trialIds),
      };
    });
  }

  /** Open (creating the file and its directory if needed) and migrate to the latest schema. */
  static open(file: string, opts: SqliteStorageOptions = {}): SqliteStorage {
    const migrations = opts.migrations ?? loadMigrations();
    const db = openDatabase(file, opts);
    try {
      migrate(db, migrations);
    } catch (err) {
      db.close();
      throw err;
    }
    const threaded = opts.writerThread ?? file !== ':memory:';
    return new SqliteStorage(db, migrations.length, threaded ? new CommitThread(file, opts.busyTimeoutMs) : null);
  }

  async health(): Promise<StorageHealth> {
    try {
      // Ready includes the writer thread, so the first commit after a readiness probe never waits for its start.
      if (!this.closed) await this.writer?.ready();
      this.db.prepare('SELECT 1').get();
      const v = schemaVersion(this.db);
      return { ok: v === this.expectedVersion, schemaVersion: v, expectedSchemaVersion: this.expectedVersion };
    } catch (err) {
      return { ok: false, schemaVersion: -1, expectedSchemaVersion: this.expectedVersion, detail: (err as Error).message };
    }
  }

  poolStats(): null {
    return null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The writer thread's connection first, so the checkpoint below folds in everything.
    await this.writer?.close();
    // Fold the WAL back into the main file so the database is a single self-contained file at rest.
    if (this.db.open) {
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        this.db.close();
      }
    }
  }

  async getSetting(key: string) {
    const row = this.db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?').get(key);
    return row?.value ?? null;
  }

  async createStudy(...[study, initial]: Parameters<Storage['createStudy']>) {
    // One transaction: a study is never visible without its generation-0 engine state.
    return this.db.transaction(() => {
      const record = this.studies.insert(study);
      if (initial) this.trials.insertInitialState(study.id, initial, study.createdAt);
      return record;
    }).immediate();
  }
  async getStudy(...a: Parameters<Storage['getStudy']>) {
    return this.studies.get(...a);
  }
  async listStudies(...a: Parameters<Storage['listStudies']>) {
    return this.studies.page(...a);
  }
  async updateStudy(...a: Parameters<Storage['updateStudy']>) {
    return this.studies.update(...a);
  }
  async deleteStudy(...a: Parameters<Storage['deleteStudy']>) {
    return this.studies.delete(...a);
  }
  async getEngineState(...a: Parameters<Storage['getEngineState']>) {
    return this.trials.engineState(...a);
  }
  async commitGeneration(...a: Parameters<Storage['commitGeneration']>) {
    return this.writer ? this.writer.commit(...a) : this.trials.commit(...a);
  }
  async getTrial(...a: Parameters<Storage['getTrial']>) {
    return this.trials.trial(...a);
  }
  async listTrials(...a: Parameters<Storage['listTrials']>) {
    return this.trials.page(...a);
  }
  async loadLoopState(tenantId: string, studyId: string, query: LoopStateQuery) {
    return this.loopStateTx.deferred(tenantId, studyId, query);
  }
  async listCompletedTrials(studyId: string) {
    return this.trials.completed(studyId);
  }
  async listCompletedTrialsAfter(studyId: string, position: number, trialIdAt: number) {
    return this.trials.completedAfter(studyId, position, trialIdAt);
  }
  async listAllTrials(...a: Parameters<Storage['listAllTrials']>) {
    return this.reports.allTrials(...a);
  }
  async listRecentCompleted(...a: Parameters<Storage['listRecentCompleted']>) {
    return this.reports.recentCompleted(...a);
  }
  async listEngineStates(...a: Parameters<Storage['listEngineStates']>) {
    return this.reports.engineStates(...a);
  }
  async exportStudy(...a: Parameters<Storage['exportStudy']>) {
    return this.reports.exportStudy(...a);
  }
  async importStudy(...a: Parameters<Storage['importStudy']>) {
    return this.reports.importStudy(...a);
  }
  async recordIntermediate(...a: Parameters<Storage['recordIntermediate']>) {
    return this.intermediate.record(...a);
  }
  async listIntermediate(...a: Parameters<Storage['listIntermediate']>) {
    return this.intermediate.list(...a);
  }
  async stepPeers(...a: Parameters<Storage['stepPeers']>) {
    return this.intermediate.peers(...a);
  }
  async listIntermediatePage(...a: Parameters<Storage['listIntermediatePage']>) {
    return this.intermediate.page(...a);
  }
  async countCompleted(...a: Parameters<Storage['countCompleted']>) {
    return this.intermediate.countCompleted(...a);
  }
  async intermediateRange(...a: Parameters<Storage['intermediateRange']>) {
    return this.intermediate.range(...a);
  }
  async evaluationSummary(studyId: string) {
    return this.summaries.summary(studyId);
  }
  async evaluationsAround(...a: Parameters<Storage['evaluationsAround']>) {
    return this.summaries.around(...a);
  }
  async listEvaluations(...a: Parameters<Storage['listEvaluations']>) {
    return this.summaries.page(...a);
  }
  async evaluationsAt(...a: Parameters<Storage['evaluationsAt']>) {
    return this.summaries.at(...a);
  }
  async listBestSteps(...a: Parameters<Storage['listBestSteps']>) {
    return this.summaries.steps(...a);
  }
  async listEngineStatesPage(...a: Parameters<Storage['listEngineStatesPage']>) {
    return this.summaries.engineStates(...a);
  }
  async expiredLeaseCounts(...a: Parameters<Storage['expiredLeaseCounts']>) {
    return this.summaries.expiredLeases(...a);
  }
  async operationalCounts(now: string): Promise<OperationalCounts> {
    const studiesByState = Object.fromEntries(STUDY_STATES.map((s) => [s, 0])) as Record<StudyState, number>;
    for (const r of this.db.prepare<[], { state: StudyState; n: number }>('SELECT state, COUNT(*) AS n FROM studies GROUP BY state').all()) {
      studiesByState[r.state] = r.n;
    }
    // ISO-8601 UTC strings of one format compare like the instants they name.
    const leases = this.db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM trials WHERE state = 'ACTIVE' AND lease_expires_at > ?").get(now);
    return { studiesByState, openLeases: leases?.n ?? 0 };
  }

  async createApiKey(...a: Parameters<Storage['createApiKey']>) {
    return this.keys.create(...a);
  }
  async findActiveApiKey(...a: Parameters<Storage['findActiveApiKey']>) {
    return this.keys.activeByHash(...a);
  }
  async listApiKeys() {
    return this.keys.list();
  }
  async revokeApiKey(...a: Parameters<Storage['revokeApiKey']>) {
    return this.keys.revoke(...a);
  }
  async hasActiveApiKeys() {
    return this.keys.anyActive();
  }
  async isKeyed() {
    return this.keys.isKeyed();
  }
  async reopenWithoutKeys() {
    return this.keys.reopen();
  }
  async markKeyed() {
    this.keys.markKeyed();
  }
  async ensureTenant(...a: Parameters<Storage['ensureTenant']>) {
    this.keys.ensureTenant(...a);
  }
}
