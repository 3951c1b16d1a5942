/**
 * What the server's operational endpoints (readiness, metrics) read from storage, so that the HTTP
 * layer never holds the storage itself (ARCHITECTURE.md rule 1).
 */
import type { OperationalCounts, PoolStats, Storage, StorageHealth, StudiesStore, SummariesStore } from '../../storage/index.js';

export { StorageUnavailableError, STUDY_STATES, TRIAL_STATES, type PoolStats, type StudyState, type TrialState, type TrialRecord, type StorageHealth, type OperationalCounts } from '../../storage/index.js';

export class Operations {
  constructor(private readonly storage: SummariesStore & StudiesStore & Pick<Storage, 'health' | 'poolStats'>) {}

  /** Reachable and migrated to exactly the schema this code knows. */
  health(): Promise<StorageHealth> {
    return this.storage.health();
  }

  /** Studies by state and open leases, all tenants, at `now`. */
  counts(now: Date): Promise<OperationalCounts> {
    return this.storage.operationalCounts(now.toISOString());
  }

  /** The database connection pool's figures (PostgreSQL); null for SQLite. */
  poolStats(): PoolStats | null {
    return this.storage.poolStats();
  }

  /** A study's method, or null when the tenant has no such study. */
  async studyMethod(tenantId: string, studyId: string): Promise<string | null> {
    return (await this.storage.getStudy(tenantId, studyId))?.method ?? null;
  }
}
