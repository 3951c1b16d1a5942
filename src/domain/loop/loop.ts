/**
 * The optimisation loop as a service: suggestions, observations and the trial actions (heartbeat,
 * fail, abandon). Every request on a study runs under that study's lock: load the study, change it
 * in memory (engine calls included, through the runner), then write everything in one commit,
 * guarded by the engine-state revision and each changed trial's state. A conflict (another replica
 * wrote in between) reloads and recomputes; the engine is pure, so recomputing is safe.
 * A request loads only the trials it can touch (study-snapshot.ts); engine states and histories are
 * kept per study in memory (study-cache.ts). Observation requests that queue behind the lock are
 * applied one after the other to one snapshot and written in one commit (commit-group.ts): one
 * fsync for the group, each request validated and answered on its own, after that commit.
 * Generation rules: generation.ts; leases: lease.ts; observation checks: observations.ts.
 */
import type { CommitResult, LoopStore, StudyState, SummariesStore, TrialRecord } from '../../storage/index.js';
import { CommitGroups, type Outcome } from './commit-group.js';
import type { EngineRunner } from '../pool/engine-pool.js';
import { DomainError, StudyNotFoundError } from '../common/errors.js';
import { advanceIfDue, askMore, completeIfDone, extrasAmong, givenUp, type LoopContext, type LoopLogger } from './generation.js';
import { budgetHeld, DEFAULT_CLIENT, expireLeases, heldBy, leaseTo, type BudgetHeld } from './lease.js';
import { ConcurrentUpdateError, LeaseNotHeldError, TrialAlreadyCompletedError, TrialNotActiveError, UnknownTrialsError } from './loop-errors.js';
import { applyObservations, type ObservationInput } from './observations.js';
import { KeyedMutex } from './study-lock.js';
import { CONVERGED, foundNoNewConfiguration } from './no-repeat.js';
import { StudyCache } from './study-cache.js';
import { StaleSnapshotError, StudySnapshot } from './study-snapshot.js';
import { writeEngineState } from '../studies/codec.js';
import { methodFacts } from '../../engine/index.js';
import { reportTrial, type ReportedTrial } from '../results/index.js';

export type SuggestReason = 'study_completed' | 'study_paused' | 'max_trials_reached' | 'converged';

export interface Suggestions {
  trials: ReportedTrial[];
  /** Why fewer than `count` came back; null otherwise. */
  reason: SuggestReason | null;
  generation: number;
  /** Results the generation's update waits for (batch_size, or the engine's choice for lq-cmaes). */
  generationSize: number;
  /**
   * How many of `trials` are extras: points of the current generation beyond its generationSize,
   * drawn from the same distribution because more were asked for than the generation has.
   */
  extras: number;
  /**
   * The method ranks a generation (registry facts: ranksGeneration; its batch_size is ≥ 2) and
   * updates from generationSize results only, so extras' results are lost to it; the others (ProbNES,
   * BO, random) use every result.
   */
  ranksGeneration: boolean;
  /**
   * With reason max_trials_reached: what holds the budget (the trials still leased, to whom and
   * until when, and those waiting as REQUESTED). Null otherwise.
   */
  budget: BudgetHeld | null;
}

export interface ObservationResult {
  trials: ReportedTrial[];
  generation: number;
  studyState: StudyState;
}

export interface LoopServiceDeps {
  storage: LoopStore & SummariesStore;
  runner: EngineRunner;
  now?: () => Date;
  log?: LoopLogger;
  /**
   * Start a request from what this process's last commit on the study left (StudyCache.warm)
   * instead of loading it, when it has it. Worth it where a load is a database round trip
   * (PostgreSQL: the load's statement is about half of a request's database work); a stale entry
   * (another replica committed, a PATCH) is caught by the commit's check and costs one reload.
   */
  warmSnapshots?: boolean;
  /** The per-study cache (a fresh one by default; tests pass their own to look into it). */
  cache?: StudyCache;
}

/**
 * Commit attempts before giving up on a study other writers keep changing. One process never
 * conflicts with itself (its lock orders a study's requests); replicas sharing a database do, on
 * a busy study, and each lost race costs one reload: after the first, a random pause of up to
 * 2^attempt ms (≤ 64) spreads the racers out so that they stop meeting.
 */
const MAX_ATTEMPTS = 10;
const backoff = (attempt: number) => (attempt < 2 ? Promise.resolve() : new Promise<void>((r) => setTimeout(r, Math.random() * Math.min(64, 2 ** attempt))));
/** Whether the request changed anything that its commit would write. */
const hasWrites = (snap: StudySnapshot) =>
  snap.updates().length > 0 || snap.newTrials().length > 0 || snap.engine !== snap.loadedEngine || snap.studyState !== null;
const SILENT: LoopLogger = { warn: () => {}, error: () => {} };

/** What the loop's requests cost in storage reads and recomputation, counted since start (/metrics). */
export interface LoopStats {
  /** Attempts that read the study from storage (a cold start, or again after a conflict). */
  loads: number;
  /** Attempts that started from this process's last commit instead (warmSnapshots). */
  warmStarts: number;
  /** Warm attempts thrown away and done again from a load (their commit was refused, or they could not prove the state current). */
  warmDiscarded: number;
  /** Cold attempts done again because another writer changed the study during the request. */
  recomputes: number;
  /** Reads of a study's completed history (the per-study cache did not have it). */
  historyReads: number;
  /** Reads of only what another writer completed since the cached history (study-snapshot.ts). */
  historyCatchUps: number;
  /** The per-study cache's estimated bytes (study-cache.ts). */
  cacheBytes: number;
}

export class LoopService {
  private readonly storage: LoopStore & SummariesStore;
  private readonly runner: EngineRunner;
  private readonly now: () => Date;
  private readonly log: LoopLogger;
  private readonly warmSnapshots: boolean;
  private readonly lock = new KeyedMutex();
  private readonly cache: StudyCache;
  private readonly counts = { loads: 0, warmStarts: 0, warmDiscarded: 0, recomputes: 0 };
  private readonly observations = new CommitGroups<{ tenantId: string; inputs: readonly ObservationInput[] }, ObservationResult>(this.lock);

  constructor(deps: LoopServiceDeps) {
    this.storage = deps.storage;
    this.runner = deps.runner;
    this.now = deps.now ?? (() => new Date());
    this.log = deps.log ?? SILENT;
    this.warmSnapshots = deps.warmSnapshots ?? false;
    this.cache = deps.cache ?? new StudyCache();
  }

  get stats(): LoopStats {
    return { ...this.counts, historyReads: this.cache.historyReads, historyCatchUps: this.cache.catchUps, cacheBytes: this.cache.size.bytes };
  }

  /** The client's held trials first (retries never create work), then REQUESTED ones, then new ones. */
  suggest(tenantId: string, studyId: string, count: number, clientId: string = DEFAULT_CLIENT): Promise<Suggestions> {
    return this.mutate(tenantId, studyId, [], async (snap, ctx) => {
      const done = (trials: TrialRecord[], reason: SuggestReason | null): Suggestions => {
        const handed = this.handOut(snap, trials, clientId);
        return {
          trials: handed.map((t) => reportTrial(snap.study, t)),
          reason,
          generation: snap.generation,
          generationSize: snap.generationSize,
          extras: extrasAmong(snap, trials),
          ranksGeneration: methodFacts(snap.study.method).ranksGeneration,
          // After handOut: the asker's new leases are listed with the times they got.
          budget: reason === 'max_trials_reached' && snap.study.maxTrials !== null ? budgetHeld(snap, snap.study.maxTrials) : null,
        };
      };
      if (snap.study.state === 'COMPLETED') return done([], snap.study.reason === CONVERGED ? 'converged' : 'study_completed');
      // Handing a held trial out again renews its lease: the client is evidently alive.
      const out = heldBy(snap, clientId).slice(0, count).map((t) => leaseTo(snap, t, clientId, ctx.now));
      if (out.length === count) return done(out, null);
      if (snap.study.state === 'PAUSED') return done(out, 'study_paused');
      await advanceIfDue(snap, ctx);
      for (const t of snap.inState('REQUESTED')) {
        if (out.length === count) break;
        out.push(leaseTo(snap, t, clientId, ctx.now));
      }
      if (out.length < count) out.push(...(await askMore(snap, count - out.length, clientId, ctx)));
      // Fewer points: the budget is spent, or no new configuration could be drawn (no-repeat.ts).
      return done(out, out.length < count ? (foundNoNewConfiguration(snap) ? 'converged' : 'max_trials_reached') : null);
    });
  }

  /**
   * Atomic: everything is validated before anything is written. Updates the model when a generation
   * is complete. Grouped with the other observation requests waiting for the study (one commit).
   */
  observe(tenantId: string, studyId: string, inputs: readonly ObservationInput[]): Promise<ObservationResult> {
    return this.observations.submit(studyId, `${tenantId}\u0000${studyId}`, { tenantId, inputs }, (group) => this.observeGroup(tenantId, studyId, group.map((g) => g.inputs)));
  }

  /**
   * Each request in turn, exactly as if it came alone: validate against the state left by the ones
   * before it (a rejected one changes nothing), apply, update the model when due. One commit.
   */
  private observeGroup(tenantId: string, studyId: string, group: (readonly ObservationInput[])[]): Promise<Outcome<ObservationResult>[]> {
    const trialIds = [...new Set(group.flatMap((inputs) => inputs.flatMap((o) => ('trial_id' in o ? [o.trial_id] : []))))];
    return this.attempt(tenantId, studyId, trialIds, async (snap, ctx) => {
      const outcomes: Outcome<ObservationResult>[] = [];
      for (const [i, inputs] of group.entries()) {
        // Each request its own time, as if it had come alone (completion order is by time).
        if (i > 0) ctx.now = this.now();
        try {
          const trials = applyObservations(snap, inputs, ctx.now);
          await advanceIfDue(snap, ctx);
          completeIfDone(snap);
          // Copies: later requests of the group may change the same records.
          const value = { trials: trials.map((t) => reportTrial(snap.study, t)), generation: snap.generation, studyState: snap.studyState?.state ?? snap.study.state };
          outcomes.push({ ok: true, value });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    });
  }

  /**
   * Extends the lease by lease_seconds from now. With `clientId`, only that client's lease; a lease
   * that expired but that nobody else took yet is renewed for its last holder.
   */
  heartbeat(tenantId: string, studyId: string, trialId: number, clientId?: string): Promise<ReportedTrial> {
    return this.mutate(tenantId, studyId, [trialId], async (snap, ctx) => {
      const t = this.trialOf(snap, trialId);
      const reclaimable = t.state === 'REQUESTED' && t.clientId !== null;
      if (t.state !== 'ACTIVE' && !reclaimable) throw new TrialNotActiveError(trialId, t.state, 'only an ACTIVE trial has a lease to extend');
      if (clientId !== undefined && t.clientId !== clientId) throw new LeaseNotHeldError(trialId, clientId);
      return reportTrial(snap.study, leaseTo(snap, t, t.clientId!, ctx.now));
    });
  }

  /**
   * The evaluation crashed: FAILED with the reason; the model never sees it. Repeating it is a no-op.
   * A trial the service gave up on (superseded) may still be failed or abandoned by its client: that
   * verdict is the client's, and a result arriving after it is refused.
   */
  fail(tenantId: string, studyId: string, trialId: number, reason: string, clientId?: string): Promise<ReportedTrial> {
    return this.close(tenantId, studyId, trialId, 'FAILED', reason, clientId);
  }

  /** The point will never be evaluated: ABANDONED. Repeating it is a no-op. */
  abandon(tenantId: string, studyId: string, trialId: number, clientId?: string): Promise<ReportedTrial> {
    return this.close(tenantId, studyId, trialId, 'ABANDONED', 'abandoned_by_client', clientId);
  }

  private close(tenantId: string, studyId: string, trialId: number, state: 'FAILED' | 'ABANDONED', reason: string, clientId?: string): Promise<ReportedTrial> {
    return this.mutate(tenantId, studyId, [trialId], async (snap, ctx) => {
      const t = this.trialOf(snap, trialId);
      const revivable = givenUp(t);
      if (t.state === state && !revivable) return reportTrial(snap.study, t);
      if (t.state === 'COMPLETED') throw new TrialAlreadyCompletedError(trialId, 'and keeps its result');
      if (t.state !== 'ACTIVE' && t.state !== 'REQUESTED' && !revivable) throw new TrialNotActiveError(trialId, t.state, `it cannot become ${state}`);
      const holder = t.state === 'ACTIVE' || revivable ? t.clientId : null;
      if (clientId !== undefined && holder !== null && holder !== clientId) throw new LeaseNotHeldError(trialId, clientId);
      return reportTrial(snap.study, snap.change(trialId, { state, failureReason: reason, leaseExpiresAt: null, completedAt: ctx.now.toISOString() }));
    });
  }

  /**
   * The leases of the trials a suggestion hands out start now, when they are handed out: the engine
   * calls that produced them (an update, new points, a wait for a worker) may have taken longer than
   * lease_seconds, and a lease stamped when the request began would already have run out.
   */
  private handOut(snap: StudySnapshot, trials: TrialRecord[], clientId: string): TrialRecord[] {
    const at = this.now();
    return trials.map((t) => leaseTo(snap, t, clientId, at));
  }

  private trialOf(snap: StudySnapshot, trialId: number): TrialRecord {
    const t = snap.trial(trialId);
    if (!t) throw new UnknownTrialsError(snap.study.id, [trialId]);
    return t;
  }

  /** Lock, load, expire leases, compute, commit once; reload and recompute on a write conflict. */
  private mutate<T>(tenantId: string, studyId: string, trialIds: readonly number[], fn: (snap: StudySnapshot, ctx: LoopContext) => Promise<T>): Promise<T> {
    return this.lock.run(studyId, () => this.attempt(tenantId, studyId, trialIds, fn));
  }

  /**
   * Load, expire leases, compute, commit once; reload and recompute on a write conflict. Under the
   * study's lock. With warm snapshots, the first try may start from the cached post-commit state
   * instead of a load; what that try decides stands only if its commit succeeds (the commit's check
   * proves the state was current). If it would write nothing, or fails with a domain error, it may
   * have been decided on a stale state that no commit checked: it is done again from a load.
   */
  private async attempt<T>(tenantId: string, studyId: string, trialIds: readonly number[], fn: (snap: StudySnapshot, ctx: LoopContext) => Promise<T>): Promise<T> {
    let warm = this.warmSnapshots ? this.cache.warm(studyId, tenantId) : null;
    if (warm && !trialIds.every((id) => warm!.trials.some((t) => t.trialId === id))) warm = null;
    for (let attempt = 1; ; attempt++) {
      const fromWarm = warm !== null;
      if (fromWarm) this.counts.warmStarts++;
      else this.counts.loads++;
      const snap = warm ? StudySnapshot.fromWarm(this.storage, this.cache, warm) : await StudySnapshot.load(this.storage, this.cache, tenantId, studyId, trialIds);
      warm = null;
      // Used at most once: the commit below replaces it, a failure must not reuse it.
      this.cache.setWarm(studyId, null);
      const ctx: LoopContext = { runner: this.runner, log: this.log, now: this.now() };
      expireLeases(snap, ctx.now);
      let result: T;
      try {
        result = await fn(snap, ctx);
      } catch (err) {
        if (fromWarm && (err instanceof DomainError || err instanceof StaleSnapshotError)) {
          this.counts.warmDiscarded++;
          continue;
        }
        if (!(err instanceof StaleSnapshotError)) throw err;
        this.retryOrGiveUp(studyId, attempt, 'stale_snapshot');
        await backoff(attempt);
        continue;
      }
      if (fromWarm && !hasWrites(snap)) {
        this.counts.warmDiscarded++;
        continue;
      }
      const res = await this.commit(snap, ctx, tenantId);
      if (res === null || res.committed) return result;
      if (res.reason === 'study_not_found') {
        this.cache.forget(studyId);
        throw new StudyNotFoundError(studyId);
      }
      // Another writer since this process's last commit: the expected case of a warm start that
      // lost, not worth a warning or a pause.
      if (fromWarm) {
        this.counts.warmDiscarded++;
        this.cache.forgetState(studyId);
        continue;
      }
      this.retryOrGiveUp(studyId, attempt, res.reason);
      await backoff(attempt);
    }
  }

  private retryOrGiveUp(studyId: string, attempt: number, reason: string): void {
    this.counts.recomputes++;
    this.cache.forgetState(studyId);
    this.log.warn({ study_id: studyId, attempt, reason }, 'study changed during the request; recomputing');
    if (attempt >= MAX_ATTEMPTS) throw new ConcurrentUpdateError(studyId);
  }

  /** Writes what the request changed (null: nothing to write) and keeps the cache in step. */
  private async commit(snap: StudySnapshot, ctx: LoopContext, tenantId: string): Promise<CommitResult | null> {
    const studyId = snap.study.id;
    if (!hasWrites(snap)) return null;
    const trialUpdates = snap.updates();
    const newTrials = snap.newTrials();
    const engineChanged = snap.engine !== snap.loadedEngine;
    const evaluations = await snap.evaluationRows(this.storage);
    const res = await this.storage.commitGeneration(studyId, {
      expectedRevision: snap.revision,
      expectedCommitSeq: snap.commitSeq,
      generation: snap.generation,
      engineState: engineChanged ? writeEngineState(snap.engine) : null,
      newTrials,
      trialUpdates,
      ...(snap.studyState ? { studyState: snap.studyState } : {}),
      ...(evaluations.length > 0 ? { evaluations } : {}),
      now: ctx.now.toISOString(),
    });
    if (!res.committed) return res;
    // The in-memory records (and so the results) carry the ids the loop expected storage to assign.
    const expected = snap.addedIds();
    if (res.trialIds.some((id, i) => id !== expected[i])) throw new Error('storage assigned other trial ids than the loop expected');
    if (engineChanged) this.cache.setEngine(studyId, res.revision, snap.engine);
    this.cache.extendCompleted(studyId, snap.loadedCompleted, snap.freshlyCompleted());
    if (this.warmSnapshots) this.cache.setWarm(studyId, snap.afterCommit(tenantId, engineChanged ? res.revision : snap.revision, evaluations));
    return res;
  }
}
