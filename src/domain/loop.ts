/**
 * The optimisation loop as a service: suggestions, observations and the trial actions (heartbeat,
 * fail, abandon). Every request on a study runs under that study's lock: load the study, change it
 * in memory (engine calls included, through the runner), then write everything in one commit,
 * guarded by the engine-state revision and each changed trial's state. A conflict (another replica
 * wrote in between) reloads and recomputes; the engine is pure, so recomputing is safe.
 * Generation rules: generation.ts; leases: lease.ts; observation checks: observations.ts.
 */
import type { Storage, StudyState, TrialRecord } from '../storage/index.js';
import type { EngineRunner } from './engine-pool.js';
import { StudyNotFoundError } from './errors.js';
import { advanceIfDue, askMore, completeIfDone, type LoopContext, type LoopLogger } from './generation.js';
import { DEFAULT_CLIENT, expireLeases, heldBy, leaseTo } from './lease.js';
import { ConcurrentUpdateError, LeaseNotHeldError, TrialAlreadyCompletedError, TrialNotActiveError, UnknownTrialsError } from './loop-errors.js';
import { applyObservations, type ObservationInput } from './observations.js';
import { KeyedMutex } from './study-lock.js';
import { StudySnapshot } from './study-snapshot.js';

export type SuggestReason = 'study_completed' | 'study_paused' | 'max_trials_reached';

export interface Suggestions {
  trials: TrialRecord[];
  /** Why fewer than `count` came back; null otherwise. */
  reason: SuggestReason | null;
  generation: number;
}

export interface ObservationResult {
  trials: TrialRecord[];
  generation: number;
  studyState: StudyState;
}

export interface LoopServiceDeps {
  storage: Storage;
  runner: EngineRunner;
  now?: () => Date;
  log?: LoopLogger;
}

/** Commit attempts before giving up on a study other writers keep changing. */
const MAX_ATTEMPTS = 5;
const SILENT: LoopLogger = { warn: () => {}, error: () => {} };

export class LoopService {
  private readonly storage: Storage;
  private readonly runner: EngineRunner;
  private readonly now: () => Date;
  private readonly log: LoopLogger;
  private readonly lock = new KeyedMutex();

  constructor(deps: LoopServiceDeps) {
    this.storage = deps.storage;
    this.runner = deps.runner;
    this.now = deps.now ?? (() => new Date());
    this.log = deps.log ?? SILENT;
  }

  /** The client's held trials first (retries never create work), then REQUESTED ones, then new ones. */
  suggest(tenantId: string, studyId: string, count: number, clientId: string = DEFAULT_CLIENT): Promise<Suggestions> {
    return this.mutate(tenantId, studyId, async (snap, ctx) => {
      const done = (trials: TrialRecord[], reason: SuggestReason | null): Suggestions => ({ trials, reason, generation: snap.generation });
      if (snap.study.state === 'COMPLETED') return done([], 'study_completed');
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
      return done(out, out.length < count ? 'max_trials_reached' : null);
    });
  }

  /** Atomic: everything is validated before anything is written. Updates the model when a generation is complete. */
  observe(tenantId: string, studyId: string, inputs: readonly ObservationInput[]): Promise<ObservationResult> {
    return this.mutate(tenantId, studyId, async (snap, ctx) => {
      const trials = applyObservations(snap, inputs, ctx.now);
      await advanceIfDue(snap, ctx);
      completeIfDone(snap);
      return { trials, generation: snap.generation, studyState: snap.studyState?.state ?? snap.study.state };
    });
  }

  /**
   * Extends the lease by lease_seconds from now. With `clientId`, only that client's lease; a lease
   * that expired but that nobody else took yet is renewed for its last holder.
   */
  heartbeat(tenantId: string, studyId: string, trialId: number, clientId?: string): Promise<TrialRecord> {
    return this.mutate(tenantId, studyId, async (snap, ctx) => {
      const t = this.trialOf(snap, trialId);
      const reclaimable = t.state === 'REQUESTED' && t.clientId !== null;
      if (t.state !== 'ACTIVE' && !reclaimable) throw new TrialNotActiveError(trialId, t.state, 'only an ACTIVE trial has a lease to extend');
      if (clientId !== undefined && t.clientId !== clientId) throw new LeaseNotHeldError(trialId, clientId);
      return leaseTo(snap, t, t.clientId!, ctx.now);
    });
  }

  /** The evaluation crashed: FAILED with the reason; the model never sees it. Repeating it is a no-op. */
  fail(tenantId: string, studyId: string, trialId: number, reason: string, clientId?: string): Promise<TrialRecord> {
    return this.close(tenantId, studyId, trialId, 'FAILED', reason, clientId);
  }

  /** The point will never be evaluated: ABANDONED. Repeating it is a no-op. */
  abandon(tenantId: string, studyId: string, trialId: number, clientId?: string): Promise<TrialRecord> {
    return this.close(tenantId, studyId, trialId, 'ABANDONED', 'abandoned_by_client', clientId);
  }

  private close(tenantId: string, studyId: string, trialId: number, state: 'FAILED' | 'ABANDONED', reason: string, clientId?: string): Promise<TrialRecord> {
    return this.mutate(tenantId, studyId, async (snap, ctx) => {
      const t = this.trialOf(snap, trialId);
      if (t.state === state) return t;
      if (t.state === 'COMPLETED') throw new TrialAlreadyCompletedError(trialId, 'and keeps its result');
      if (t.state !== 'ACTIVE' && t.state !== 'REQUESTED') throw new TrialNotActiveError(trialId, t.state, `it cannot become ${state}`);
      if (clientId !== undefined && t.state === 'ACTIVE' && t.clientId !== clientId) throw new LeaseNotHeldError(trialId, clientId);
      return snap.change(trialId, { state, failureReason: reason, leaseExpiresAt: null, completedAt: ctx.now.toISOString() });
    });
  }

  private trialOf(snap: StudySnapshot, trialId: number): TrialRecord {
    const t = snap.trial(trialId);
    if (!t) throw new UnknownTrialsError(snap.study.id, [trialId]);
    return t;
  }

  /** Lock, load, expire leases, compute, commit once; reload and recompute on a write conflict. */
  private mutate<T>(tenantId: string, studyId: string, fn: (snap: StudySnapshot, ctx: LoopContext) => Promise<T>): Promise<T> {
    return this.lock.run(studyId, async () => {
      for (let attempt = 1; ; attempt++) {
        const snap = await StudySnapshot.load(this.storage, tenantId, studyId);
        const ctx: LoopContext = { runner: this.runner, log: this.log, now: this.now() };
        expireLeases(snap, ctx.now);
        const result = await fn(snap, ctx);
        const trialUpdates = snap.updates();
        const newTrials = snap.newTrials();
        const engineChanged = snap.engine !== snap.loadedEngine;
        if (trialUpdates.length === 0 && newTrials.length === 0 && !engineChanged && !snap.studyState) return result;
        const res = await this.storage.commitGeneration(studyId, {
          expectedRevision: snap.revision,
          generation: snap.generation,
          engineState: engineChanged ? { version: snap.engine.version, state: snap.engine as never } : null,
          newTrials,
          trialUpdates,
          ...(snap.studyState ? { studyState: snap.studyState } : {}),
          now: ctx.now.toISOString(),
        });
        if (res.committed) {
          // The in-memory records (and so `result`) carry the ids the loop expected storage to assign.
          const expected = snap.addedIds();
          if (res.trials.some((t, i) => t.trialId !== expected[i])) throw new Error('storage assigned other trial ids than the loop expected');
          return result;
        }
        if (res.reason === 'study_not_found') throw new StudyNotFoundError(studyId);
        this.log.warn({ study_id: studyId, attempt, reason: res.reason }, 'study changed during the request; recomputing');
        if (attempt >= MAX_ATTEMPTS) throw new ConcurrentUpdateError(studyId);
      }
    });
  }
}
