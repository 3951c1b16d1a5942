/**
 * One study as the optimisation loop sees it during a request: the study, its search space, the
 * latest engine state and the trials the request can touch (every REQUESTED or ACTIVE trial, the
 * suggested trials of the current generation, and the trials the request names), loaded once,
 * changed in memory, then written back in one commit (the service never holds a transaction across
 * an engine call). Counts by state cover every trial; the completed history is fetched only when an
 * engine call needs it (through the per-study cache, see study-cache.ts).
 */
import { generationSize, methodFacts, type BaseState, type Observation } from '../../engine/index.js';
import { newTrialRecord, type KeyedEvaluation, type LoopStore, type NewTrial, type StudyState, type SummariesStore, type TrialCounts, type TrialRecord, type TrialState, type TrialUpdate } from '../../storage/index.js';
import { StudyNotFoundError } from '../common/errors.js';
import { readEngineState, readStudy } from '../studies/codec.js';
import { completionOf, completionRows, ModelHistory, modelOutcomes, objectiveOf, type Completion } from '../results/index.js';
import { isStopped } from '../studies/stopping-rule.js';
import { completionOrder, mergeCompleted, type CompletedPoint, type StudyCache, type WarmSnapshot } from './study-cache.js';
import { plainHistory, type HistoryLog, type LoopHistory } from './engine-history.js';

export type { WarmSnapshot } from './study-cache.js';
import type { Study } from '../studies/studies.js';
import { searchSpace, type SearchSpace } from '../studies/transforms.js';

/** The fields of a trial that a request may change. */
export type TrialChange = Partial<Pick<TrialUpdate, 'state' | 'clientId' | 'leaseExpiresAt' | 'value' | 'stderr' | 'values' | 'constraints' | 'infeasible' | 'failureReason' | 'late' | 'completedAt'>>;

/** Storage changed between the request's reads (another writer): reload and recompute. */
export class StaleSnapshotError extends Error {}

const toPoint = (t: TrialRecord): CompletedPoint => {
  const p: CompletedPoint = { trialId: t.trialId, completedAt: t.completedAt!, point: t.point, value: t.value, stderr: t.stderr, parameters: t.parameters, stopped: isStopped(t) };
  // Only when set: a single-objective study's points stay as small as they were (the cache holds every one).
  if (t.values) p.values = t.values;
  if (t.constraints) p.constraints = t.constraints;
  if (t.infeasible) p.infeasible = true;
  return p;
};

/**
 * The study's `count` COMPLETED trials in completion order: from the cache when it has exactly
 * those; when it has fewer (another writer completed the rest), the cached ones and only what was
 * completed after them, if storage confirms that nothing was placed among them; else read whole
 * (and cached).
 */
function completedTrials(storage: LoopStore, cache: StudyCache, studyId: string, count: number): () => Promise<readonly CompletedPoint[]> {
  return async () => {
    const cached = cache.completed(studyId, count);
    if (cached) return cached;
    const behind = cache.behind(studyId, count);
    if (behind) {
      const more = (await storage.listCompletedTrialsAfter(studyId, behind.length, behind[behind.length - 1]!.trialId)).map(toPoint);
      if (behind.length + more.length === count && cache.appendStored(studyId, behind, more)) {
        cache.catchUps++;
        return behind;
      }
    }
    cache.historyReads++;
    const fresh = (await storage.listCompletedTrials(studyId)).map(toPoint);
    if (fresh.length === count) cache.setCompleted(studyId, fresh);
    return fresh;
  };
}

export interface SnapshotInit {
  study: Study;
  space: SearchSpace;
  revision: number;
  engine: BaseState;
  trials: TrialRecord[];
  counts: TrialCounts;
  nextTrialId: number;
  /** The study's commit count as loaded (the guard of this request's commit). */
  commitSeq: number;
  /** The study's last evaluation in completion order as loaded (null: none). */
  lastEvaluation: KeyedEvaluation | null;
  /** The stored COMPLETED trials in completion order (as of the load, or later if another writer committed). */
  completed: () => Promise<readonly CompletedPoint[]>;
  /** The cache's key set of a list `completed` returned (StudyCache.completedKeys), or null if that list is not the cached one. */
  completedKeys: (completed: readonly CompletedPoint[], space: SearchSpace, of: (p: CompletedPoint) => string) => ReadonlySet<string> | null;
  /** The cache's history log of a list `completed` returned (StudyCache.history), or null if that list is not the cached one. */
  completedHistory: (completed: readonly CompletedPoint[], start: () => ModelHistory) => { log: HistoryLog; reader: ModelHistory } | null;
}

export class StudySnapshot {
  readonly study: Study;
  readonly space: SearchSpace;
  readonly revision: number;
  readonly commitSeq: number;
  /** The study's last evaluation in completion order as loaded (null: none). */
  readonly lastEvaluation: KeyedEvaluation | null;
  engine: BaseState;
  /** Working copies of the loaded trials, by ascending trial id, then the added ones. */
  readonly trials: TrialRecord[];
  private readonly byId = new Map<number, TrialRecord>();
  /** State each changed trial had when loaded: the guard of its update. */
  private readonly loadedState = new Map<number, TrialState>();
  /** Trials created by this request; their ids are the ones storage will assign (ids are consecutive). */
  private readonly added = new Set<number>();
  private nextId: number;
  /** Trials by state, every trial of the study (not only the loaded ones), as changed in memory. */
  private readonly counts: TrialCounts;
  /** COMPLETED trials when loaded. */
  readonly loadedCompleted: number;
  private readonly loadCompleted: () => Promise<readonly CompletedPoint[]>;
  private readonly cachedKeys: SnapshotInit['completedKeys'];
  private readonly cachedHistory: SnapshotInit['completedHistory'];
  /** The engine state as loaded, to tell whether this request changed it. */
  readonly loadedEngine: BaseState;
  /** A state change the loop makes itself (max_trials reached). */
  studyState: { state: StudyState; reason: string | null } | null = null;

  constructor(init: SnapshotInit) {
    this.study = init.study;
    this.space = init.space;
    this.revision = init.revision;
    this.commitSeq = init.commitSeq;
    this.lastEvaluation = init.lastEvaluation;
    this.engine = init.engine;
    this.trials = init.trials.map((t) => ({ ...t }));
    for (const t of this.trials) this.byId.set(t.trialId, t);
    this.nextId = init.nextTrialId;
    this.counts = { ...init.counts };
    this.loadedCompleted = init.counts.COMPLETED;
    // Read once per request: the ask and the no-repeat check see the same list.
    let stored: Promise<readonly CompletedPoint[]> | null = null;
    this.loadCompleted = () => (stored ??= init.completed());
    this.cachedKeys = init.completedKeys;
    this.cachedHistory = init.completedHistory;
    this.loadedEngine = init.engine;
  }

  /**
   * Reads what the request needs (one storage read transaction), with the engine state and the
   * completed history from `cache` when they are still current.
   */
  static async load(storage: LoopStore, cache: StudyCache, tenantId: string, studyId: string, trialIds: readonly number[] = []): Promise<StudySnapshot> {
    const loaded = await storage.loadLoopState(tenantId, studyId, { trialIds, knownRevision: cache.engineRevision(studyId) });
    if (!loaded) {
      cache.forget(studyId);
      throw new StudyNotFoundError(studyId);
    }
    // Every study gets its engine state in the transaction that creates it.
    if (loaded.revision === null) throw new Error(`study ${studyId} has no engine state`);
    const study = readStudy(loaded.study);
    const engine = loaded.engineState ? readEngineState(studyId, study.method, loaded.engineState) : cache.engine(studyId, loaded.revision);
    if (!engine) throw new Error(`study ${studyId}: engine state of revision ${loaded.revision} neither read nor cached`);
    if (loaded.engineState) cache.setEngine(studyId, loaded.revision, engine);
    return new StudySnapshot({
      study,
      space: cache.space(studyId, study.createdAt, () => searchSpace(study.parameters, study.prior)),
      revision: loaded.revision,
      engine,
      trials: loaded.trials,
      counts: loaded.study.trialCounts,
      nextTrialId: loaded.nextTrialId,
      commitSeq: loaded.commitSeq,
      lastEvaluation: loaded.lastEvaluation,
      completed: completedTrials(storage, cache, studyId, loaded.study.trialCounts.COMPLETED),
      completedKeys: (list, space, of) => cache.completedKeys(studyId, list, space, of),
      completedHistory: (list, start) => cache.history(studyId, list, start),
    });
  }

  /**
   * The snapshot as it stands after this request's commit, which moved the study from `commitSeq`
   * to `commitSeq + 1` (and the engine state to `revision`): exactly what a load right after it
   * would read, as long as nobody else commits (the next commit's check says whether they did).
   */
  afterCommit(tenantId: string, revision: number, evaluations: readonly KeyedEvaluation[]): WarmSnapshot {
    const generation = this.generation;
    const study = this.studyState ? { ...this.study, state: this.studyState.state, reason: this.studyState.reason } : this.study;
    return {
      tenantId,
      study,
      revision,
      engine: this.engine,
      // Copies: the cache must not share records with a snapshot that later requests may not see.
      trials: this.trials
        .filter((t) => t.state === 'REQUESTED' || t.state === 'ACTIVE' || (t.source === 'suggested' && t.generation === generation))
        .sort((a, b) => a.trialId - b.trialId)
        .map((t) => ({ ...t })),
      counts: { ...this.counts },
      nextTrialId: this.nextId,
      commitSeq: this.commitSeq + 1,
      // The rows written run from the first new result to the end of completion order.
      lastEvaluation: evaluations[evaluations.length - 1] ?? this.lastEvaluation,
    };
  }

  /** A snapshot from what this process's last commit left (no storage read); `completed` as in load. */
  static fromWarm(storage: LoopStore, cache: StudyCache, warm: WarmSnapshot): StudySnapshot {
    const studyId = warm.study.id;
    return new StudySnapshot({
      study: warm.study,
      space: cache.space(studyId, warm.study.createdAt, () => searchSpace(warm.study.parameters, warm.study.prior)),
      revision: warm.revision,
      engine: warm.engine,
      trials: [...warm.trials],
      counts: warm.counts,
      nextTrialId: warm.nextTrialId,
      commitSeq: warm.commitSeq,
      lastEvaluation: warm.lastEvaluation,
      completed: completedTrials(storage, cache, studyId, warm.counts.COMPLETED),
      completedKeys: (list, space, of) => cache.completedKeys(studyId, list, space, of),
      completedHistory: (list, start) => cache.history(studyId, list, start),
    });
  }

  /** The generation the engine is in: the number of updates (tells) so far. */
  get generation(): number {
    return this.engine.generation;
  }

  trial(trialId: number): TrialRecord | undefined {
    return this.byId.get(trialId);
  }

  /** A new trial, visible to the rest of this request at once (history, pending, counts). */
  add(t: NewTrial, now: string): TrialRecord {
    const record = newTrialRecord(this.study.id, this.nextId++, t, now);
    this.trials.push(record);
    this.byId.set(record.trialId, record);
    this.added.add(record.trialId);
    this.counts[record.state]++;
    return record;
  }

  addedIds(): number[] {
    return [...this.added];
  }

  /** The trials this request created, as storage inserts them (in id order). */
  newTrials(): NewTrial[] {
    return [...this.added].map((id) => {
      const t = this.byId.get(id)!;
      const { state, generation, parameters, point, source, clientId, leaseExpiresAt, value, stderr, completedAt } = t;
      const optional = { ...(t.values ? { values: t.values } : {}), ...(t.constraints ? { constraints: t.constraints } : {}), ...(t.infeasible ? { infeasible: true } : {}) };
      return { state, generation, parameters, point, source, clientId, leaseExpiresAt, value, stderr, completedAt, ...optional };
    });
  }

  change(trialId: number, change: TrialChange): TrialRecord {
    const t = this.byId.get(trialId)!;
    if (!this.added.has(trialId) && !this.loadedState.has(trialId)) this.loadedState.set(trialId, t.state);
    if (change.state !== undefined && change.state !== t.state) {
      this.counts[t.state]--;
      this.counts[change.state]++;
    }
    Object.assign(t, change);
    return t;
  }

  /** Changed trials as guarded storage updates. */
  updates(): TrialUpdate[] {
    return [...this.loadedState.entries()].map(([trialId, expectedState]) => {
      const t = this.byId.get(trialId)!;
      return {
        trialId,
        expectedState,
        state: t.state,
        clientId: t.clientId,
        leaseExpiresAt: t.leaseExpiresAt,
        value: t.value,
        stderr: t.stderr,
        ...(t.values ? { values: t.values } : {}),
        ...(t.constraints ? { constraints: t.constraints } : {}),
        ...(t.infeasible ? { infeasible: true } : {}),
        failureReason: t.failureReason,
        late: t.late,
        completedAt: t.completedAt,
      };
    });
  }

  /** Loaded or added trials in these states: all of them for REQUESTED and ACTIVE, not for the others. */
  inState(...states: TrialState[]): TrialRecord[] {
    return this.trials.filter((t) => states.includes(t.state));
  }

  /** Trials in this state among all of the study's, as changed by this request. */
  count(state: TrialState): number {
    return this.counts[state];
  }

  /** Whether this request completed the trial (a result, an external point). */
  private completedHere(t: TrialRecord): boolean {
    return t.state === 'COMPLETED' && (this.added.has(t.trialId) || (this.loadedState.has(t.trialId) && this.loadedState.get(t.trialId) !== 'COMPLETED'));
  }

  /** Trials this request completed (results, external points), in completion order. */
  freshlyCompleted(): CompletedPoint[] {
    return this.trials
      .filter((t) => this.completedHere(t))
      .map(toPoint)
      .sort(completionOrder);
  }

  /**
   * The evaluation rows this request's commit writes (results/evaluations.ts): one per trial it
   * completed, placed after the loaded last evaluation, or, when one of them belongs before it (a
   * clock behind another writer's), among the stored ones read around it. Computed from the study
   * as of `commitSeq`, which the commit checks.
   */
  async evaluationRows(storage: SummariesStore): Promise<KeyedEvaluation[]> {
    const added: Completion[] = this.trials.flatMap((t) => (this.completedHere(t) ? (completionOf(t) ?? []) : []));
    return completionRows(storage, this.study.id, objectiveOf(this.study), this.lastEvaluation, added);
  }

  /**
   * Every completed trial (suggested and external) in completion order: by completion time, then
   * trial id (results of one request share a time; trial ids make the order total and stable, so
   * a reloaded study sees the same history), as (x, y) for the engine, a stopped trial's y as
   * results/stopped.ts makes it. Usually the per-study cache's log of the stored ones and this
   * request's results after them, which an engine call sends as what a thread does not hold yet
   * (engine-history.ts); a plain list when this request's results do not all come after the stored
   * ones, or the list is not the cached one. Empty for a method that reads no history
   * (MethodFacts.readsHistory): nothing is read for it.
   */
  async history(): Promise<LoopHistory> {
    if (!methodFacts(this.study.method).readsHistory) return plainHistory([]);
    const stored = await this.storedCompleted();
    const fresh = this.freshlyCompleted();
    const last = stored[stored.length - 1];
    if (fresh.length === 0 || last === undefined || completionOrder(last, fresh[0]!) < 0) {
      const cached = this.cachedHistory(stored, () => this.modelHistory());
      // A stopped result is read against the stored ones: the cache's reader after them, forked (this
      // request's results may yet be refused by its commit). Unstopped ones need no reader's state.
      const reader = (r: ModelHistory) => (fresh.some((p) => p.stopped) ? r.fork() : this.modelHistory());
      if (cached) return { log: cached.log, stored: cached.log.obs.length, fresh: reader(cached.reader).all(fresh) };
    }
    return plainHistory(this.modelHistory().all(mergeCompleted(stored, fresh)));
  }

  /** A reader of this study's completed trials as the engine sees them (results/stopped.ts). */
  private modelHistory(): ModelHistory {
    return new ModelHistory(objectiveOf(this.study), modelOutcomes(this.study));
  }

  /**
   * The engine's observations of `trials` (COMPLETED, with a point; the results of the update due),
   * each as it is in the history: a stopped one's value depends on the results completed before it.
   */
  async modelObservations(trials: readonly TrialRecord[]): Promise<Observation[]> {
    const of = this.modelHistory();
    // A result that was not stopped is its own observation; only a stopped one needs the trials before it.
    if (!trials.some(isStopped)) return of.all(trials.map(toPoint));
    const byId = new Map<number, Observation | null>();
    for (const p of await this.completedPoints()) byId.set(p.trialId, of.next(p));
    return trials.map((t) => byId.get(t.trialId)!);
  }

  /** Every completed trial (suggested and external) in completion order, as stored and as this request completed them. */
  async completedPoints(): Promise<CompletedPoint[]> {
    return mergeCompleted(await this.storedCompleted(), this.freshlyCompleted());
  }

  /** The stored completed trials this request started from (read once; from the cache when current). */
  private async storedCompleted(): Promise<readonly CompletedPoint[]> {
    const stored = await this.loadCompleted();
    // Another writer completed trials after this request's load: its view is no longer one state.
    if (stored.length !== this.loadedCompleted) throw new StaleSnapshotError(`study ${this.study.id}: completed trials changed during the request`);
    return stored;
  }

  /**
   * The keys `of` the stored completed trials (those completedPoints() starts from; this request's
   * own are freshlyCompleted()): the per-study cache's set, built once and extended with each
   * commit (study-cache.ts), or built here when the list is not the cached one. Read-only.
   */
  async storedCompletedKeys(of: (p: CompletedPoint) => string): Promise<ReadonlySet<string>> {
    const stored = await this.storedCompleted();
    return this.cachedKeys(stored, this.space, of) ?? new Set(stored.map(of));
  }

  /** Points handed out or about to be, not yet observed (ProbNES conditions its batch on them). */
  pending(): number[][] {
    return this.inState('REQUESTED', 'ACTIVE')
      .filter((t) => t.point !== null)
      .map((t) => t.point!);
  }

  /** Suggested trials of the current generation, by trial id. */
  generationTrials(): TrialRecord[] {
    return this.trials.filter((t) => t.source === 'suggested' && t.generation === this.generation);
  }

  /**
   * Results the current generation's update waits for: batch_size, or what the engine state says
   * (lq-CMA-ES asks for a variable number of points per generation).
   */
  get generationSize(): number {
    return generationSize(this.engine);
  }

  /**
   * The results the next update is made from, or null if it is not due: the first generationSize
   * completed trials of the current generation, in trial order (failed or abandoned points are
   * replaced by the extra points asked after them).
   */
  tellBatch(): TrialRecord[] | null {
    const size = this.generationSize;
    const done = this.generationTrials().filter((t) => t.state === 'COMPLETED');
    return done.length >= size ? done.slice(0, size) : null;
  }

  /** Trials that use up the max_trials budget: everything not failed or abandoned. */
  budgetUsed(): number {
    return this.counts.REQUESTED + this.counts.ACTIVE + this.counts.COMPLETED;
  }
}
