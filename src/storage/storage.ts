/**
 * The storage contract: coarse, atomic units of work that return Promises of plain objects.
 *
 * Nothing outside src/storage sees SQL or a driver. The embedded implementation is better-sqlite3
 * (src/storage/sqlite); the PostgreSQL one (src/storage/postgres) lets several replicas share one
 * database, with per-study concurrency enforced by the database (see `commitGeneration`'s expected
 * revision and commit sequence) rather than only by an in-process lock.
 *
 * Field types are the storage's own: JSON columns come back as `JsonValue`, and the service,
 * which wrote them, narrows them again.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const STUDY_STATES = ['ACTIVE', 'PAUSED', 'COMPLETED'] as const;
export type StudyState = (typeof STUDY_STATES)[number];
export const TRIAL_STATES = ['REQUESTED', 'ACTIVE', 'COMPLETED', 'FAILED', 'ABANDONED'] as const;
export type TrialState = (typeof TRIAL_STATES)[number];
export type TrialCounts = Record<TrialState, number>;

/** A study as written at creation. */
export interface NewStudyRecord {
  id: string;
  tenantId: string;
  name: string;
  direction: 'minimize' | 'maximize';
  parameters: JsonValue;
  prior: JsonValue;
  method: string;
  batchSize: number;
  options: JsonObject;
  seed: number;
  maxTrials: number | null;
  leaseSeconds: number;
  knownOptimum: number | null;
  metadata: JsonObject;
  state: StudyState;
  reason: string | null;
  createdAt: string;
  /** How the loop treats repeats and early stopping (the service's JSON; absent: `{}`, the defaults). */
  loopSettings?: JsonObject;
  /**
   * The study's objectives, constraints and reference point (the service's JSON, src/domain/results);
   * absent or null: one objective in `direction`, no constraints.
   */
  outcomes?: JsonObject | null;
}

export interface StudyRecord extends NewStudyRecord {
  generation: number;
  updatedAt: string;
  trialCounts: TrialCounts;
}

/** Fields a PATCH may change; absent fields are left alone. */
export interface StudyPatch {
  name?: string;
  metadata?: JsonObject;
  state?: StudyState;
  reason?: string | null;
  updatedAt: string;
}

/** One page of a listing; `next` is an opaque storage cursor, null on the last page. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

export interface PageRequest {
  /** Cursor from the previous page's `next`, or null for the first page. */
  after: string | null;
  limit: number;
}

/** A parameter's value in user units: a number, or a categorical parameter's choice. */
export type ParameterValue = number | string | boolean;

export interface TrialRecord {
  studyId: string;
  trialId: number;
  state: TrialState;
  generation: number;
  clientId: string | null;
  leaseExpiresAt: string | null;
  /** User units, keyed by parameter name. */
  parameters: Record<string, ParameterValue>;
  /** Internal (whitened) coordinates, as the engine saw the point. */
  point: number[] | null;
  value: number | null;
  stderr: number | null;
  /** Several objectives: the objectives' values in the study's order (`value` is null then); absent or null otherwise. */
  values?: number[] | null;
  /** The constraint values reported with the result, when the study declares constraints. */
  constraints?: number[] | null;
  /** Reported infeasible: the point could not be evaluated (no value); absent or null otherwise. */
  infeasible?: boolean | null;
  failureReason: string | null;
  /** The result came after the service gave the trial up (superseded, study completed); see observations.ts. */
  late: boolean;
  source: 'suggested' | 'external';
  createdAt: string;
  completedAt: string | null;
  updatedAt: string;
}

/** A trial to insert; the storage assigns the per-study `trialId`. */
export interface NewTrial {
  state: TrialState;
  generation: number;
  parameters: Record<string, ParameterValue>;
  point: number[] | null;
  source: 'suggested' | 'external';
  clientId?: string | null;
  leaseExpiresAt?: string | null;
  value?: number | null;
  stderr?: number | null;
  values?: number[] | null;
  constraints?: number[] | null;
  infeasible?: boolean | null;
  completedAt?: string | null;
}

/** The record a NewTrial becomes when inserted as trial `trialId` at `now`: what every backend's insert stores. */
export function newTrialRecord(studyId: string, trialId: number, t: NewTrial, now: string): TrialRecord {
  return {
    studyId,
    trialId,
    state: t.state,
    generation: t.generation,
    clientId: t.clientId ?? null,
    leaseExpiresAt: t.leaseExpiresAt ?? null,
    parameters: t.parameters,
    point: t.point,
    value: t.value ?? null,
    stderr: t.stderr ?? null,
    failureReason: null,
    late: false,
    source: t.source,
    createdAt: now,
    completedAt: t.completedAt ?? null,
    updatedAt: now,
    // Only when set, as a record read back has them (trial-columns.ts).
    ...(t.values ? { values: t.values } : {}),
    ...(t.constraints ? { constraints: t.constraints } : {}),
    ...(t.infeasible ? { infeasible: true } : {}),
  };
}

/** One intermediate value a running trial reported (early stopping): one per trial and step. */
export interface IntermediateRecord {
  trialId: number;
  step: number;
  value: number;
  createdAt: string;
}

/** For a stopping rule at one step: a COMPLETED trial that reported a value at that step, with its failure reason. */
export interface StepPeer {
  trialId: number;
  failureReason: string | null;
  value: number;
}

/** Where a walk over a study's intermediate values stands: after this trial's value at this step. */
export interface IntermediateCursor {
  trialId: number;
  step: number;
}

export interface EngineStateRecord {
  studyId: string;
  generation: number;
  /** Increases by one with every commit for this study. */
  revision: number;
  /** Format version of `state`, so old snapshots can be migrated or refused. */
  version: number;
  state: JsonValue;
  createdAt: string;
}

/**
 * "Commit a generation": the new engine state and the trials it produced, in one transaction.
 * `expectedRevision` is the revision the caller computed from (null: the study has no engine state
 * yet); if another writer committed in the meantime nothing is written and the result says so, and
 * the caller reloads and recomputes (the service never holds a transaction across an engine call).
 */
export interface GenerationCommit {
  expectedRevision: number | null;
  /**
   * The study's `commitSeq` the caller loaded (LoopState); when given, a commit by any other writer
   * since then (another replica: leases, results, new trials, even without a new engine state)
   * refuses this one as a `revision_conflict`. Without it only the revision and trial guards apply.
   */
  expectedCommitSeq?: number;
  generation: number;
  /**
   * The new snapshot (stored under `generation`, revision + 1), or null when only trials change
   * (leases, results without an update): the revision is then checked but not advanced.
   */
  engineState: { version: number; state: JsonValue } | null;
  newTrials: NewTrial[];
  /** Changes to existing trials, each guarded by the state the caller read (else `trial_conflict`). */
  trialUpdates?: TrialUpdate[];
  /** A study state change made by the loop itself (e.g. COMPLETED when max_trials results are in). */
  studyState?: { state: StudyState; reason: string | null };
  /**
   * The study_evaluations rows this commit changes, computed by the domain from the study as of
   * `expectedCommitSeq` (required with them, so rows computed from a state another writer has since
   * changed are never written): one per trial it completes with a value, and the rows after them in
   * completion order when they are placed before some (new position, best so far and step). Written
   * as given (inserted or replaced by key) in the commit's transaction.
   */
  evaluations?: KeyedEvaluation[];
  now: string;
}

/** The full mutable part of a trial after the change; applied only if the trial is still in `expectedState`. */
export interface TrialUpdate {
  trialId: number;
  expectedState: TrialState;
  state: TrialState;
  clientId: string | null;
  leaseExpiresAt: string | null;
  value: number | null;
  stderr: number | null;
  values?: number[] | null;
  constraints?: number[] | null;
  infeasible?: boolean | null;
  failureReason: string | null;
  late: boolean;
  completedAt: string | null;
}

/**
 * What a commit wrote: the revision now current (advanced only when an engine state was written) and
 * the ids assigned to `newTrials`, in order. The caller has the rest of what it wrote; reading the
 * trials back (or copying them across a writer thread) would cost more than the inserts.
 */
export type CommitResult =
  | { committed: true; revision: number; trialIds: number[] }
  | { committed: false; reason: 'study_not_found' | 'revision_conflict' | 'trial_conflict' };

/**
 * What one request of the optimisation loop reads, in one read transaction (a consistent snapshot):
 * the study with its trial counts, the latest engine state, and only the trials the request can
 * touch. The completed history is read separately, when an engine call needs it.
 */
export interface LoopState {
  study: StudyRecord;
  /** Revision of the latest engine state; null when the study has none. */
  revision: number | null;
  /** The latest engine state; null when there is none or its revision is the caller's `knownRevision`. */
  engineState: EngineStateRecord | null;
  /** The id the next inserted trial gets. */
  nextTrialId: number;
  /** The study's last evaluation in completion order (null: none yet), where the next results usually go. */
  lastEvaluation: KeyedEvaluation | null;
  /** Counts the study's commits (every writer, any change): what `expectedCommitSeq` checks. */
  commitSeq: number;
  /**
   * By ascending trial id: every REQUESTED or ACTIVE trial, every suggested trial of the latest
   * engine state's generation, and those of `trialIds` that exist.
   */
  trials: TrialRecord[];
}

export interface LoopStateQuery {
  trialIds: readonly number[];
  /** The revision whose engine state the caller already holds (so it is not read and parsed again). */
  knownRevision: number | null;
}

/** The generation-0 engine state written in the same transaction as a new study. */
export interface InitialEngineState {
  version: number;
  state: JsonValue;
}

/**
 * A whole study written at once by `importStudy`: the study as exported (its generation and
 * timestamps included), its trials with their original per-study ids, and its engine-state
 * snapshots with their revisions, so that the imported copy continues exactly where the original was.
 */
export interface ImportedStudy extends NewStudyRecord {
  generation: number;
  updatedAt: string;
}
export type ImportedTrial = Omit<TrialRecord, 'studyId'>;
export type ImportedEngineState = Omit<EngineStateRecord, 'studyId'>;

/**
 * One evaluation as /history reads it: a COMPLETED trial with a value, at its 1-based position in
 * completion order (completed_at, then trial id), with the best value up to and including it in the
 * study's direction. Computed by the domain and written by the storage in the transaction that
 * completes the trial (table study_evaluations), so reading a page or the best costs O(page), not
 * O(trials).
 */
export interface EvaluationRecord {
  index: number;
  trialId: number;
  value: number;
  bestSoFar: number;
  /** Strictly better than every earlier value: a step of the best-so-far curve. */
  improved: boolean;
}

/**
 * An evaluation with its place in completion order (the key of study_evaluations: `completedAt`,
 * '' for a trial completed without a time, then `trialId`), as the domain computes it and the
 * storage writes it. The storage decides nothing about it: which value is better, and so the best
 * so far and the steps, is the domain's (src/domain/results).
 */
export interface KeyedEvaluation extends EvaluationRecord {
  completedAt: string;
}

/**
 * A study's evaluations around a completion key: the last one before it (null: none) and every one
 * at or after it, in completion order. What a commit that completes a trial at that key needs to
 * compute the rows it writes (usually `after` is empty: results arrive in completion order).
 */
export interface EvaluationsAround {
  before: KeyedEvaluation | null;
  after: KeyedEvaluation[];
}

/** How many evaluations a study has, and its best (the last best-so-far step; the first in completion order on ties). */
export interface EvaluationSummary {
  count: number;
  best: EvaluationRecord | null;
}

/** Server-wide counts for monitoring (all tenants): studies by state and leases not yet expired. */
export interface OperationalCounts {
  studiesByState: Record<StudyState, number>;
  openLeases: number;
}

/**
 * The database could not be reached or dropped the connection mid-request (a server restart, a
 * terminated backend, a network cut): the request's outcome is unknown to the caller only if it
 * was a commit, and an identical retry is safe (the loop's writes are idempotent). HTTP: 503.
 */
export class StorageUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'StorageUnavailableError';
  }
}

/** A connection pool's figures for /metrics (PostgreSQL); SQLite has none. */
export interface PoolStats {
  /** Connections open (idle and busy). */
  total: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
  max: number;
  /** Requests that found the database unreachable and idle connections lost (terminated, network) since start; the pool opens new ones by itself. */
  errors: number;
  /** Statements sent since start (each one round trip; BEGIN and COMMIT included). */
  statements: number;
  /** Generation commits since start, and how long they held the study's row lock (from the lock's grant to COMMIT's answer). */
  commits: number;
  lockHeldMsSum: number;
  lockHeldMsMax: number;
}

export interface StorageHealth {
  ok: boolean;
  schemaVersion: number;
  expectedSchemaVersion: number;
  detail?: string;
}

/** An API key as stored: only the SHA-256 of the key, never the key itself. */
export interface NewApiKeyRecord {
  id: string;
  tenantId: string;
  /** Lower-case hex SHA-256 of the whole key string. */
  keyHash: string;
  label: string | null;
  createdAt: string;
}
export interface ApiKeyRecord extends NewApiKeyRecord {
  revokedAt: string | null;
}

/**
 * The storage port, by aggregate: each interface below is one aggregate's units of work, served
 * on each database by a repository of its own (SQLite: sqlite/*-repo.ts; PostgreSQL:
 * postgres/*-repo.ts) and held to a contract suite of its own run against both
 * (test/storage/contract.ts).
 */

/** Studies: create, read, list, change, delete. */
export interface StudiesStore {
  /** With `initial`, the generation-0 engine state is written in the same transaction (never a study without one). */
  createStudy(study: NewStudyRecord, initial?: InitialEngineState): Promise<StudyRecord>;
  /** Null when the study does not exist or belongs to another tenant. */
  getStudy(tenantId: string, studyId: string): Promise<StudyRecord | null>;
  /** Oldest first, stable under concurrent inserts. */
  listStudies(tenantId: string, page: PageRequest): Promise<Page<StudyRecord>>;
  updateStudy(tenantId: string, studyId: string, patch: StudyPatch): Promise<StudyRecord | null>;
  /** Deletes the study with its trials and engine states; false when there was none. */
  deleteStudy(tenantId: string, studyId: string): Promise<boolean>;

}

/** The optimisation loop: its one read, its one write (the commit) and the trials and engine states it works on. */
export interface LoopStore {
  /** The latest engine state of a study, or a given generation's; null when none. */
  getEngineState(studyId: string, generation?: number): Promise<EngineStateRecord | null>;
  commitGeneration(studyId: string, commit: GenerationCommit): Promise<CommitResult>;
  getTrial(studyId: string, trialId: number): Promise<TrialRecord | null>;
  /**
   * By ascending trial id, optionally filtered by state. With `now`, the filter sees expired leases as
   * they read (see expiredLeaseCounts): an ACTIVE trial whose lease ran out by `now` is REQUESTED.
   * The records come back as stored.
   */
  listTrials(studyId: string, query: PageRequest & { state?: TrialState; now?: string }): Promise<Page<TrialRecord>>;

  /** Null when the study does not exist or belongs to another tenant. */
  loadLoopState(tenantId: string, studyId: string, query: LoopStateQuery): Promise<LoopState | null>;
  /** The COMPLETED trials of a study in completion order: by completed_at, then trial id. */
  listCompletedTrials(studyId: string): Promise<TrialRecord[]>;
  /**
   * The COMPLETED trials with a value after the first `position` in completion order (the
   * positions of study_evaluations), in that order, provided the trial at `position` is still
   * `trialIdAt` (ignored for position 0): a reader that holds the first `position` catches up with
   * what was completed since by reading only that. Empty when the check fails, i.e. a result was
   * placed at or before `position` since (an earlier completion time, another writer's clock); the
   * caller tells that from the count it expects and reads the whole list. One snapshot.
   */
  listCompletedTrialsAfter(studyId: string, position: number, trialIdAt: number): Promise<TrialRecord[]>;
}

/** Whole studies at once: history, model views, export and import. */
export interface ReportsStore {
  /** Every trial of a study by ascending trial id (export, history); empty for an unknown study. */
  listAllTrials(studyId: string): Promise<TrialRecord[]>;
  /**
   * The last `limit` COMPLETED trials with a value in completion order (completed_at, then trial
   * id) among those completed at or before `completedBy` (null: all of them), returned in completion
   * order: one range of study_evaluations' key (study, completed_at, trial id) joined to the trials
   * by primary key, so O(limit) whatever the study's size (the model views read this).
   */
  listRecentCompleted(studyId: string, q: { limit: number; completedBy: string | null }): Promise<TrialRecord[]>;
  /** Every engine-state snapshot of a study (one per generation), by ascending generation. */
  listEngineStates(studyId: string): Promise<EngineStateRecord[]>;
  /** A study with all its trials and engine states, read in one transaction (a consistent snapshot). */
  exportStudy(
    tenantId: string,
    studyId: string,
  ): Promise<{ study: StudyRecord; trials: TrialRecord[]; engineStates: EngineStateRecord[]; intermediate: IntermediateRecord[] } | null>;
  /**
   * Writes a study with its trials, engine states, intermediate values and evaluations (the domain's
   * rows for its COMPLETED trials with a value) in one transaction: all of it or nothing.
   */
  importStudy(study: ImportedStudy, trials: ImportedTrial[], engineStates: ImportedEngineState[], intermediate: IntermediateRecord[], evaluations: KeyedEvaluation[]): Promise<StudyRecord>;

}

/** Intermediate values of running trials (early stopping). */
export interface IntermediateStore {
  /**
   * Stores a trial's value at `step` unless one is stored already (durably, before it resolves).
   * Returns the stored record: this one (`inserted`) or the earlier one for that step, left as it was.
   */
  recordIntermediate(studyId: string, record: IntermediateRecord): Promise<{ inserted: boolean; record: IntermediateRecord }>;
  /** Intermediate values of a study (of the given trials only, if given), by trial id then step. */
  listIntermediate(studyId: string, trialIds?: readonly number[]): Promise<IntermediateRecord[]>;
  /**
   * Intermediate values after `after` (null: from the start) in (trial id, step) order, at most
   * `limit`: a range of the primary key (study, trial, step), so O(limit) whatever the study's size.
   */
  listIntermediatePage(studyId: string, q: { after: IntermediateCursor | null; limit: number }): Promise<IntermediateRecord[]>;
  /**
   * The COMPLETED trials that reported a value at `step`, by trial id: the (study, step) index, so
   * O(trials that reported this step), never the study's other steps nor the trials that did not reach it.
   */
  stepPeers(studyId: string, step: number): Promise<StepPeer[]>;
  /**
   * How many COMPLETED trials have a failure reason other than `exceptFailureReason` (or none),
   * counted up to `atMost` (the answer is min(count, atMost)): a walk of the (study, state) index
   * that ends after `atMost` matches.
   */
  countCompleted(studyId: string, q: { exceptFailureReason: string; atMost: number }): Promise<number>;
  /** The smallest and largest value a trial reported at steps ≤ `throughStep` (null: none): one range of the primary key, aggregated in the database. */
  intermediateRange(studyId: string, trialId: number, throughStep: number): Promise<{ min: number; max: number } | null>;

}

/** The read side's O(page) summaries: evaluations, best-so-far steps, engine-state pages, lease and server counts. */
export interface SummariesStore {
  /** The study's evaluation count and best evaluation (O(1): two index lookups). */
  evaluationSummary(studyId: string): Promise<EvaluationSummary>;
  /** The last evaluation before (`completedAt`, `trialId`) in completion order and every one from it on (one snapshot). */
  evaluationsAround(studyId: string, key: { completedAt: string; trialId: number }): Promise<EvaluationsAround>;
  /** Evaluations with index > `afterIndex`, by ascending index, at most `limit`. */
  listEvaluations(studyId: string, q: { afterIndex: number; limit: number }): Promise<EvaluationRecord[]>;
  /** The evaluations at these indices (those that exist), by ascending index. */
  evaluationsAt(studyId: string, indices: readonly number[]): Promise<EvaluationRecord[]>;
  /** Best-so-far steps with afterIndex < index ≤ throughIndex, by ascending index, at most `limit`. */
  listBestSteps(studyId: string, q: { afterIndex: number; throughIndex: number; limit: number }): Promise<EvaluationRecord[]>;
  /** Engine-state snapshots with generation > `afterGeneration`, by ascending generation, at most `limit`. */
  listEngineStatesPage(studyId: string, q: { afterGeneration: number; limit: number }): Promise<EngineStateRecord[]>;
  /**
   * ACTIVE trials whose lease had run out at `now`, per study (studies without any are absent).
   * Expiry is written lazily, by the next loop request on the study; reads show those trials as
   * REQUESTED at once (what that request would write). O(ACTIVE trials of these studies).
   */
  expiredLeaseCounts(studyIds: readonly string[], now: string): Promise<Record<string, number>>;
  /** Counts for /metrics gauges; `now` (ISO-8601) decides which ACTIVE leases are still open. */
  operationalCounts(now: string): Promise<OperationalCounts>;

}

/** API keys and tenants. */
export interface KeysStore {
  /** Creates the tenant (id = name) if it does not exist yet, with the key, and marks the server keyed (isKeyed), in one transaction. */
  createApiKey(key: NewApiKeyRecord): Promise<ApiKeyRecord>;
  /** The key with this hash unless it is revoked; null otherwise. */
  findActiveApiKey(keyHash: string): Promise<ApiKeyRecord | null>;
  /** Every key, revoked ones included, oldest first (hashes, never keys). */
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** False when there is no such key or it was already revoked. */
  revokeApiKey(id: string, revokedAt: string): Promise<boolean>;
  /** Whether at least one unrevoked key exists (the server then never runs open). */
  hasActiveApiKeys(): Promise<boolean>;
  /**
   * Whether requests need a key: an unrevoked key exists, or keys were created and the server has
   * not been opened again since (revoking the last key keeps it keyed; see reopenWithoutKeys).
   * Databases from before this rule count as keyed once any key, revoked or not, was created.
   */
  isKeyed(): Promise<boolean>;
  /** Lets requests without a key in again (as tenant default); false, changing nothing, while an unrevoked key exists. */
  reopenWithoutKeys(): Promise<boolean>;
  /** Records that the server is keyed without a stored key (keys from the environment), so it stays keyed without them. */
  markKeyed(): Promise<void>;
  /** Creates a tenant (id = name) if it does not exist yet; for keys given in the environment. */
  ensureTenant(id: string, createdAt: string): Promise<void>;
}

/** The whole port: every aggregate, and the database's own health and lifetime. */
export interface Storage extends StudiesStore, LoopStore, ReportsStore, IntermediateStore, SummariesStore, KeysStore {
  /** Reachable and migrated to exactly the schema this code knows (readiness). */
  health(): Promise<StorageHealth>;
  /** Which backend, for logs and metrics. */
  readonly kind: 'sqlite' | 'postgres';
  /** The connection pool's figures; null for a backend without one. */
  poolStats(): PoolStats | null;
  /** Flush and release the database; later calls fail. */
  close(): Promise<void>;
  /** Server-wide settings kept with the data (e.g. the pagination-token secret). */
  getSetting(key: string): Promise<string | null>;
}
