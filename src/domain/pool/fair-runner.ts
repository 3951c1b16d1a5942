/**
 * Fair engine time between tenants, in front of the worker pool (docs/capacity.md).
 *
 * Every engine call names its caller (tenant and study). Calls are sorted into two lanes:
 *
 * - light: methods without a model (random, cmaes, xnes, snes) whose calls of that kind took at
 *   most `lightMs` on this study so far. They have slots of their own, so a trivial CMA-ES loop
 *   never waits behind a GP fit of seconds;
 * - heavy: everything else (GP-based methods, lq-CMA-ES's least squares, and any call measured
 *   above `lightMs`). Heavy calls wait in one FIFO queue per tenant, and a free slot takes the next
 *   tenant's oldest call in round-robin order, so a tenant with many heavy studies gets its share
 *   of the pool, not all of it.
 *
 * What one caller may have waiting or running is bounded: `perStudy` calls per study, `perTenant`
 * per tenant, and no call is queued whose predicted wait (from the measured times of the calls
 * ahead of it) exceeds `maxWaitMs`. A call over a bound is refused at once with EngineBusyError
 * (HTTP 429 with Retry-After), which a client retries, instead of a request that stalls for tens
 * of seconds. The inner runner gets at most `heavySlots` heavy calls at a time; light calls run on
 * a worker of their own (createEngineRunner), whose thread also keeps its normal priority while the
 * heavy threads run niced, so neither a queue nor the CPU a GP fit takes delays them.
 *
 * Model views (op `model-view`: the dashboard's grid and importance) have a lane of their own too.
 * A view is one call that cannot be interrupted and may take seconds (a GP fitted to 300 points in
 * 100 dimensions, then the Laplace curvature of its hyperparameters); in the heavy lane, every
 * other tenant's next GP call would wait for it to end, round robin or not. So views wait in
 * per-tenant queues of their own, served round robin on `viewSlots` threads of the lowest priority
 * (createEngineRunner), and never occupy a slot the optimisation loops use. A tenant may have at
 * most `viewsPerTenant` views queued or running (they count neither against its loop's bounds nor
 * against its studies'), and `maxWaitMs` bounds their predicted wait as for heavy calls; beyond
 * either, engine_busy with a Retry-After.
 */
import { isMethodName, methodFacts } from '../../engine/index.js';
import { DomainError } from '../common/errors.js';
import type { EngineResult, EngineTask } from './engine-tasks.js';
import { dropUnusedSince } from '../common/idle-sweep.js';

/** Who an engine call is for: what fairness and the limits count by. */
export interface EngineCaller {
  tenantId: string;
  studyId: string;
}

/** Whose engine time a study's calls use. */
export const callerOf = (snap: { study: { tenantId: string; id: string } }): EngineCaller => ({ tenantId: snap.study.tenantId, studyId: snap.study.id });

export interface FairnessLimits {
  /** Heavy calls running at once (the worker threads that compute them). */
  heavySlots: number;
  /** A light call: a model-free method whose calls took at most this long on the study. */
  lightMs: number;
  /** Calls per study waiting or running. */
  perStudy: number;
  /** Calls per tenant waiting or running. */
  perTenant: number;
  /** Longest predicted wait for a heavy (or view) slot before a call is refused. */
  maxWaitMs: number;
  /** Model views computing at once (the views lane's threads). */
  viewSlots: number;
  /** Model views per tenant waiting or running. */
  viewsPerTenant: number;
}

export const DEFAULT_FAIRNESS: FairnessLimits = { heavySlots: 1, lightMs: 50, perStudy: 2, perTenant: 8, maxWaitMs: 10_000, viewSlots: 1, viewsPerTenant: 2 };

/** A heavy call never measured before is predicted to take this long (ms), for waits and Retry-After. */
const UNKNOWN_HEAVY_MS = 1000;

/**
 * Studies × operations whose compute time is remembered, least recently used forgotten first.
 * Keys are study ids, which never come back once a study is deleted, so without a bound the map
 * grows with every study the server ever ran. An entry is a key of about 40 characters and one
 * number: about 100 bytes with the map's own overhead, so about 1 MB in all. A forgotten study is
 * measured again by its next call (until then predicted as an unmeasured one), so the bound only
 * needs to exceed the studies in use at once by a wide margin.
 */
export const MEASURED_MAX_ENTRIES = 10_000;

export class EngineBusyError extends DomainError {
  constructor(detail: string, retryAfterSeconds: number) {
    super('busy', 'engine_busy', `${detail}; retry after ${retryAfterSeconds} s`, retryAfterSeconds);
  }
}

type Run = (task: EngineTask) => Promise<{ result: EngineResult; ms: number }>;

interface Job {
  caller: EngineCaller;
  predictedMs: number;
  start: () => void;
}

/**
 * Calls waiting for `slots` slots of `inner`, one FIFO queue per tenant, a free slot taking the next
 * tenant's oldest call in round-robin order.
 */
class RoundRobinLane {
  private readonly queues = new Map<string, Job[]>();
  /** Tenants with queued calls, in round-robin order (the next to serve first). */
  private readonly turn: string[] = [];
  running = 0;
  /** Predicted ms of the calls running now. */
  private readonly runningPredicted = new Set<{ ms: number }>();

  constructor(
    private readonly slots: number,
    private readonly inner: Run,
  ) {}

  get queued(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /**
   * How long a new call of `tenantId` would wait for a slot under round robin: every other tenant
   * with queued calls gets about as many turns as this tenant has calls ahead (+1), each turn
   * costing that tenant's next predicted call; plus the running calls' predicted time. Spread over
   * the slots.
   */
  predictedWait(tenantId: string): number {
    const free = this.slots - this.running;
    const own = this.queues.get(tenantId) ?? [];
    if (free > 0 && this.turn.length === 0) return 0;
    const rounds = own.length + 1;
    let ms = own.reduce((s, j) => s + j.predictedMs, 0);
    for (const [t, q] of this.queues) {
      if (t === tenantId) continue;
      for (let i = 0; i < Math.min(rounds, q.length); i++) ms += q[i]!.predictedMs;
    }
    for (const r of this.runningPredicted) ms += r.ms;
    return ms / this.slots;
  }

  run(task: EngineTask, caller: EngineCaller, predictedMs: number): Promise<{ result: EngineResult; ms: number }> {
    return new Promise((resolve, reject) => {
      const job: Job = {
        caller,
        predictedMs,
        start: () => {
          const mark = { ms: predictedMs };
          this.running++;
          this.runningPredicted.add(mark);
          this.inner(task)
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              this.runningPredicted.delete(mark);
              this.dispatch();
            });
        },
      };
      let q = this.queues.get(caller.tenantId);
      if (!q) {
        q = [];
        this.queues.set(caller.tenantId, q);
        this.turn.push(caller.tenantId);
      }
      q.push(job);
      this.dispatch();
    });
  }

  /** Starts queued calls while slots are free, one tenant per turn. */
  private dispatch(): void {
    while (this.running < this.slots && this.turn.length > 0) {
      const tenant = this.turn.shift()!;
      const q = this.queues.get(tenant)!;
      const job = q.shift()!;
      if (q.length === 0) this.queues.delete(tenant);
      else this.turn.push(tenant);
      job.start();
    }
  }
}

export interface FairnessStats {
  queuedHeavy: number;
  runningHeavy: number;
  runningLight: number;
  queuedViews: number;
  runningViews: number;
  rejected: number;
}

type Lane = 'light' | 'heavy' | 'views';

export class FairScheduler {
  private readonly heavy: RoundRobinLane;
  private readonly views: RoundRobinLane;
  private runningLight = 0;
  private rejected = 0;
  private readonly perStudy = new Map<string, number>();
  private readonly perTenant = new Map<string, number>();
  private readonly viewsPerTenant = new Map<string, number>();
  /**
   * Measured compute time per study and operation (exponential moving average, ms) and when it was
   * last used. Map iterates in insertion order and a use re-inserts its key, so the first key is
   * the least recently used: both the count bound and forgetIdle drop from the front.
   */
  private readonly measured = new Map<string, { ms: number; usedAt: number }>();
  /** The clock of forgetIdle, in ms (tests inject one). */
  private readonly now: () => number;

  constructor(
    inner: Run,
    readonly limits: FairnessLimits = DEFAULT_FAIRNESS,
    /** Where light calls run (a pool of their own); the inner runner when absent. */
    private readonly light: Run = inner,
    /** Where model views run (a pool of their own); the inner runner when absent. */
    views: Run = inner,
    now: () => number = Date.now,
  ) {
    this.now = now;
    this.heavy = new RoundRobinLane(limits.heavySlots, inner);
    this.views = new RoundRobinLane(limits.viewSlots, views);
  }

  /** Studies × operations with a measured time (bounded by MEASURED_MAX_ENTRIES). */
  get measuredEntries(): number {
    return this.measured.size;
  }

  /**
   * Forgets the measured times no call used for `idleMs` (CACHE_IDLE_MS, domain/common/idle-sweep.ts):
   * a forgotten study is predicted as an unmeasured one until its next call measures it again, as
   * after the count bound. Returns how many were dropped.
   */
  forgetIdle(idleMs: number): number {
    return dropUnusedSince(this.measured, this.now() - idleMs);
  }

  get stats(): FairnessStats {
    return { queuedHeavy: this.heavy.queued, runningHeavy: this.heavy.running, runningLight: this.runningLight, queuedViews: this.views.queued, runningViews: this.views.running, rejected: this.rejected };
  }

  async run(task: EngineTask, caller: EngineCaller): Promise<{ result: EngineResult; ms: number }> {
    // A view's cost depends on which view it is (a grid's predictions, or a fit and its curvature).
    const key = `${caller.studyId}\u0000${task.op === 'model-view' ? `model-view:${task.task.view}` : task.op}`;
    const seen = this.measured.get(key)?.ms;
    // Methods without a model (registry facts): their calls are light until measured otherwise.
    const lane: Lane =
      task.op === 'model-view' ? 'views' : 'method' in task && isMethodName(task.method) && !methodFacts(task.method).hasModel && (seen === undefined || seen <= this.limits.lightMs) ? 'light' : 'heavy';
    const release = this.admit(caller, lane, seen);
    try {
      const out = lane === 'light' ? await this.runLight(task) : await this[lane].run(task, caller, seen ?? UNKNOWN_HEAVY_MS);
      // Deleted first so that the key moves to the end: Map iterates in insertion order, so the first key is the least recently used.
      this.measured.delete(key);
      this.measured.set(key, { ms: seen === undefined ? out.ms : 0.7 * seen + 0.3 * out.ms, usedAt: this.now() });
      if (this.measured.size > MEASURED_MAX_ENTRIES) this.measured.delete(this.measured.keys().next().value!);
      return out;
    } finally {
      release();
    }
  }

  /** Counts the call against its bounds, or refuses it (EngineBusyError); returns its release. */
  private admit(caller: EngineCaller, lane: Lane, seen: number | undefined): () => void {
    const refuse = (detail: string, waitMs: number) => {
      this.rejected++;
      throw new EngineBusyError(detail, Math.max(1, Math.ceil(waitMs / 1000)));
    };
    const wait = lane === 'light' ? 0 : this[lane].predictedWait(caller.tenantId);
    const busyFor = wait + (seen ?? UNKNOWN_HEAVY_MS);
    if (lane === 'views') {
      const views = this.viewsPerTenant.get(caller.tenantId) ?? 0;
      if (views >= this.limits.viewsPerTenant) refuse(`this tenant already has ${views} model views computing or queued (at most ${this.limits.viewsPerTenant})`, busyFor);
      if (wait > this.limits.maxWaitMs) refuse(`the model views' queue for this tenant is about ${Math.round(wait / 1000)} s long (at most ${this.limits.maxWaitMs / 1000} s is queued)`, wait);
      this.viewsPerTenant.set(caller.tenantId, views + 1);
      return () => dec(this.viewsPerTenant, caller.tenantId);
    }
    const study = this.perStudy.get(caller.studyId) ?? 0;
    const tenant = this.perTenant.get(caller.tenantId) ?? 0;
    if (study >= this.limits.perStudy) refuse(`study ${JSON.stringify(caller.studyId)} already has ${study} engine computations queued or running (at most ${this.limits.perStudy})`, busyFor);
    if (tenant >= this.limits.perTenant) refuse(`this tenant already has ${tenant} engine computations queued or running (at most ${this.limits.perTenant})`, busyFor);
    if (lane === 'heavy' && wait > this.limits.maxWaitMs) refuse(`the engine's queue for this tenant is about ${Math.round(wait / 1000)} s long (at most ${this.limits.maxWaitMs / 1000} s is queued)`, wait);
    this.perStudy.set(caller.studyId, study + 1);
    this.perTenant.set(caller.tenantId, tenant + 1);
    return () => {
      dec(this.perStudy, caller.studyId);
      dec(this.perTenant, caller.tenantId);
    };
  }

  private async runLight(task: EngineTask): Promise<{ result: EngineResult; ms: number }> {
    this.runningLight++;
    try {
      return await this.light(task);
    } finally {
      this.runningLight--;
    }
  }
}

function dec(m: Map<string, number>, k: string): void {
  const n = (m.get(k) ?? 1) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}

/** The limits from the server's configuration: one heavy slot per engine worker (one when inline). */
export function fairnessLimits(config: { engineWorkers?: number; engineQueue?: { perTenant: number; perStudy: number; maxWaitMs: number; lightMs: number } }): FairnessLimits {
  const q = config.engineQueue;
  return {
    ...DEFAULT_FAIRNESS,
    heavySlots: Math.max(1, config.engineWorkers ?? 1),
    ...(q ? { perTenant: q.perTenant, perStudy: q.perStudy, maxWaitMs: q.maxWaitMs, lightMs: q.lightMs } : {}),
  };
}
