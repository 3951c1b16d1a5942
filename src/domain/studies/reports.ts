/**
 * The read side of a study: its trials, the best point, the regret history and the search
 * distribution. Reads only; the suggest/observe loop writes what is read here.
 */
import { EngineError, type Diagnostics } from '../../engine/index.js';
import type { EngineStateRecord, LoopStore, Storage, StudiesStore, SummariesStore, TrialRecord, TrialState } from '../../storage/index.js';
import { readEngineState, readStudy, type Direction } from './codec.js';
import { frontHistory, frontOf, objectiveOf, objectiveValue, outcomesOf, regretHistory as runningRegret, reportTrial, severalObjectives, withRegret, type Evaluation, type Front, type FrontHistoryPoint, type ReferencePoint, type ReportedTrial, type StudyOutcomes } from '../results/index.js';
import type { Study } from './studies.js';
import type { NumericParameterSpec } from './study-spec.js';
import { centrePoint, internalDistribution, priorDistribution, userDistribution } from './distribution.js';
import type { ParamValue } from './study-request.js';
import type { EngineRunner } from '../pool/engine-pool.js';
import { InvalidPageTokenError, StudyNotFoundError, TrialNotFoundError } from '../common/errors.js';
import { dropUnusedSince } from '../common/idle-sweep.js';
import { asRead } from './lease-view.js';
import { decodeCursor, encodeCursor, evaluationPage, FIRST_PAGE, HISTORY_LIMITS } from './history-pages.js';
import { Paginator } from './page-token.js';
import { materialize, searchSpace, type SearchSpace } from './transforms.js';
import { approxBytes, ModelViewCache, type ModelViewCacheBounds } from './model-view-cache.js';

/** The aggregates the reports read (ARCHITECTURE.md rule 9): studies, trials and states, summaries, and the page-token key. */
export type ReportsServiceStorage = StudiesStore & LoopStore & SummariesStore & Pick<Storage, 'getSetting'>;

export interface ReportsServiceDeps {
  storage: ReportsServiceStorage;
  /** Runs the engine's `estimate` (the server's shared runner); without one, or for a method without a model, predictions are null. */
  engine?: EngineRunner | null;
  /** The clock that decides which leases have run out (trials read as REQUESTED then), and how long the caches' entries went unused (forgetIdle). */
  now?: () => Date;
  /** The front cache's bounds (FRONT_CACHE_BOUNDS unless given: tests). */
  frontCacheBounds?: ModelViewCacheBounds;
}

/** The engine's prediction, and the internal point it is at when that is not the distribution's centre. */
type Prediction = { predicted: number | null; predicted_std: number | null; point?: number[] };
/** A kept prediction and when /best last read or set it (ms, the service's clock). */
type KeptPrediction = { prediction: Prediction; usedAt: number };
/** Studies whose latest prediction is kept. */
const ESTIMATE_CACHE_SIZE = 1000;

/** One page of GET /history. */
export interface HistoryPage {
  knownOptimum: number | null;
  /** All of the study's evaluations (COMPLETED trials with a value), not only this page's. */
  evaluationCount: number;
  evaluations: Evaluation[];
  generations: GenerationReport[];
  nextPageToken: string | null;
}

export interface BestReport {
  observed: { trialId: number; parameters: Record<string, ParamValue>; value: number } | null;
  estimated: { parameters: Record<string, ParamValue>; predictedValue: number | null; predictedStd: number | null };
  /** Several objectives: no single best; the front's size and hypervolume (GET …/front lists it). Null for one objective. */
  front: { size: number; hypervolume: number } | null;
}

/** One page of GET …/front. */
export interface FrontPage {
  objectives: StudyOutcomes['objectives'];
  referencePoint: ReferencePoint | null;
  hypervolume: number;
  frontSize: number;
  evaluationCount: number;
  feasibleCount: number;
  trials: ReportedTrial[];
  nextPageToken: string | null;
}

/** One page of GET …/front/history. */
export interface FrontHistoryPage {
  referencePoint: ReferencePoint | null;
  points: FrontHistoryPoint[];
  nextPageToken: string | null;
}

/**
 * The fronts kept, so that a dashboard polling a study's front, its history and /best reads the
 * study once per change: one entry per study (its latest version replaces the one before), in a
 * per-tenant cache bounded by entries and estimated bytes (model-view-cache.ts: a tenant over its
 * bound loses its least recently used entry; over the whole bound, the tenant holding the most
 * does). An entry larger than a bound is not kept: that study's front is read anew per request.
 * By approxBytes a completed trial of two parameters and two objectives is about 1.2 kB, a point of
 * the front history about 0.2 kB: a tenant's 32 MiB hold one such study of about 24,000 results with
 * its history. Bounds: docs/capacity.md.
 */
export const FRONT_CACHE_BOUNDS: ModelViewCacheBounds = {
  perTenantEntries: 16,
  perTenantBytes: 32 * 1024 * 1024,
  entries: 64,
  bytes: 64 * 1024 * 1024,
};
interface FrontEntry {
  /** The study's version the entry is of: its creation, last change and completed count. */
  version: string;
  completed: TrialRecord[];
  front: Front<TrialRecord>;
  history?: ReturnType<typeof frontHistory>;
  /** The estimated bytes of all but the history, once computed (the entry is sized again when its history is added). */
  baseBytes?: number;
}

/** An entry's estimated bytes: the front's trials are the completed list's own objects, counted once there. */
function frontEntryBytes(value: unknown): number {
  const e = value as FrontEntry;
  if (e.baseBytes === undefined) {
    const { trials, ...front } = e.front;
    const trialsArray = 16 + 8 * trials.length; // as approxBytes counts an array, without its elements
    e.baseBytes = 16 + approxBytes(e.version) + approxBytes(e.completed) + trialsArray + approxBytes(front);
  }
  return e.baseBytes + (e.history ? approxBytes(e.history) : 0);
}

/** Largest page of the front and its history. */
export const FRONT_LIMITS = { defaultPageSize: 100, maxPageSize: 1000 } as const;

export type { Evaluation } from '../results/index.js';

export interface GenerationReport {
  generation: number;
  mean: Record<string, ParamValue>;
  std: number[];
  integralMean: number | null;
  integralStd: number | null;
  nActive: number | null;
}

export interface DistributionReport {
  generation: number;
  mean: Record<string, ParamValue>;
  meanTransformed: number[];
  covariance: number[][];
  std: number[];
  /** Of the numeric parameters, in their order (the order of the covariance). */
  scale: NumericParameterSpec['scale'][];
  probabilities: Record<string, number[]>;
}

export class ReportsService {
  private readonly storage: ReportsServiceStorage;
  private readonly engine: EngineRunner | null;
  private readonly pages: Paginator;
  private readonly now: () => Date;
  /** Predictions by study and engine-state revision (oldest first, bounded; forgotten when idle). */
  private readonly estimates = new Map<string, KeptPrediction>();
  /** The completed trials, front and (once asked for) front history of a study as of its last change: one per study, by tenant (FRONT_CACHE_BOUNDS). */
  private readonly fronts: ModelViewCache;

  constructor(deps: ReportsServiceDeps) {
    this.storage = deps.storage;
    this.engine = deps.engine ?? null;
    this.pages = new Paginator(deps.storage);
    this.now = deps.now ?? (() => new Date());
    const now = this.now;
    this.fronts = new ModelViewCache(deps.frontCacheBounds ?? FRONT_CACHE_BOUNDS, frontEntryBytes, () => now().getTime());
  }

  /**
   * Forgets the fronts and predictions no request has used for `idleMs` (CACHE_IDLE_MS, called by
   * idle-sweep.ts): a server whose traffic stops gives their memory back. As an eviction: the next
   * request reads the front again, or asks the engine again. Returns how many were dropped.
   */
  forgetIdle(idleMs: number): number {
    return this.fronts.forgetIdle(idleMs) + dropUnusedSince(this.estimates, this.now().getTime() - idleMs);
  }

  /** The predictions kept (tests). */
  get estimateCacheSize(): number {
    return this.estimates.size;
  }

  /** The front cache's entries and estimated bytes, in all and per tenant (tests). */
  frontCacheStats(): ReturnType<ModelViewCache['stats']> {
    return this.fronts.stats();
  }

  /** Trials as they read now: an ACTIVE trial whose lease ran out is REQUESTED (lease.ts, asRead), in the filter too. */
  async listTrials(tenantId: string, studyId: string, q: { state?: TrialState; pageSize: number; pageToken?: string | null }): Promise<{ trials: ReportedTrial[]; nextPageToken: string | null }> {
    const study = await this.study(tenantId, studyId);
    const now = this.now();
    // The filter is part of the scope: a token from one listing cannot continue another.
    const scope = `trials:${studyId}:${q.state ?? '*'}`;
    const page = await this.pages.page(scope, q.pageToken, (after) =>
      this.storage.listTrials(studyId, { after, limit: q.pageSize, now: now.toISOString(), ...(q.state ? { state: q.state } : {}) }),
    );
    return { trials: page.items.map((t) => reportTrial(study, asRead(t, now))), nextPageToken: page.nextPageToken };
  }

  async getTrial(tenantId: string, studyId: string, trialId: number): Promise<ReportedTrial> {
    const study = await this.study(tenantId, studyId);
    const trial = await this.storage.getTrial(studyId, trialId);
    if (!trial) throw new TrialNotFoundError(studyId, trialId);
    return reportTrial(study, asRead(trial, this.now()));
  }

  /**
   * O(1) in the study's size: the best is the last best-so-far step storage keeps with the study
   * (strictly better only, so among equal values the first in completion order keeps the title),
   * the distribution comes from the latest engine state, and the model's prediction is computed
   * once per engine-state revision.
   */
  async best(tenantId: string, studyId: string): Promise<BestReport> {
    const study = await this.study(tenantId, studyId);
    const { best: step } = await this.storage.evaluationSummary(studyId);
    const best = step ? await this.storage.getTrial(studyId, step.trialId) : null;
    const space = spaceOf(study);
    const state = await this.storage.getEngineState(studyId);
    const dist = state ? internalDistribution(state.state, space) : priorDistribution(space);
    const predicted = state ? await this.estimate(study, state) : { predicted: null, predicted_std: null };
    const several = severalObjectives(outcomesOf(study)) ? (await this.frontOf(study)).front : null;
    return {
      front: several && { size: several.trials.length, hypervolume: several.hypervolume },
      observed: best && step ? { trialId: best.trialId, parameters: best.parameters, value: step.value } : null,
      // The point the method recommends as it would be handed out (rounded, inside the bounds): the
      // distribution's centre, or the engine's own point (BO's best-predicted evaluated configuration).
      estimated: { parameters: materialize(space, recommendedPoint(space, predicted.point) ?? centrePoint(dist)).parameters, predictedValue: predicted.predicted, predictedStd: predicted.predicted_std },
    };
  }

  /**
   * One page of the history (history-pages.ts): evaluations in completion order with the running
   * best and regret, and the generations' distributions, each read in O(page). `stride` > 1
   * downsamples the evaluations, keeping every best-so-far step.
   */
  async history(tenantId: string, studyId: string, q: { pageSize?: number; pageToken?: string | null; stride?: number } = {}): Promise<HistoryPage> {
    const study = await this.study(tenantId, studyId);
    const pageSize = q.pageSize ?? HISTORY_LIMITS.defaultPageSize;
    const stride = q.stride ?? 1;
    const space = spaceOf(study);
    const toGeneration = (rec: EngineStateRecord): GenerationReport => {
      const dist = userDistribution(space, internalDistribution(rec.state, space));
      const diag: Partial<Diagnostics> | undefined = readEngineState(studyId, study.method, rec).diagnostics;
      return {
        generation: rec.generation,
        mean: dist.mean,
        std: dist.std,
        // The engine integrates y; report E_ν[value] in the study's own units.
        integralMean: mapNull(finiteOrNull(diag?.integral_mean), (m) => objectiveValue(objectiveOf(study), m)),
        integralStd: finiteOrNull(diag?.integral_std),
        // A count: an imported state may hold any number there, and the answer promises an integer.
        nActive: typeof diag?.n_active === 'number' && Number.isSafeInteger(diag.n_active) && diag.n_active >= 0 ? diag.n_active : null,
      };
    };
    const { count } = await this.storage.evaluationSummary(studyId);
    let result: Omit<HistoryPage, 'nextPageToken'> | null = null;
    // The stride is part of the scope: a token from one listing cannot continue another.
    const page = await this.pages.page(`history:${studyId}:${stride}`, q.pageToken, async (after) => {
      const cursor = after === null ? FIRST_PAGE : decodeCursor(after);
      if (!cursor) throw new InvalidPageTokenError();
      const [evals, states] = await Promise.all([
        evaluationPage(this.storage, studyId, count, cursor.afterIndex, pageSize, stride),
        this.storage.listEngineStatesPage(studyId, { afterGeneration: cursor.afterGeneration, limit: HISTORY_LIMITS.generationsPerPage + 1 }),
      ]);
      const moreGenerations = states.length > HISTORY_LIMITS.generationsPerPage;
      const kept = states.slice(0, HISTORY_LIMITS.generationsPerPage);
      result = { knownOptimum: study.knownOptimum, evaluationCount: count, evaluations: evals.items.map((e) => withRegret(objectiveOf(study), e, study.knownOptimum)), generations: kept.map(toGeneration) };
      const next = { afterIndex: evals.items[evals.items.length - 1]?.index ?? cursor.afterIndex, afterGeneration: kept[kept.length - 1]?.generation ?? cursor.afterGeneration };
      return { items: [], next: evals.more || moreGenerations ? encodeCursor(next) : null };
    });
    return { ...result!, nextPageToken: page.nextPageToken };
  }

  /**
   * The Pareto front of the feasible results (results/front.ts), best first by the first objective,
   * in pages. O(completed trials) once per change of the study, then O(page) while it does not change.
   */
  async front(tenantId: string, studyId: string, q: { pageSize?: number; pageToken?: string | null } = {}): Promise<FrontPage> {
    const study = await this.study(tenantId, studyId);
    const { front } = await this.frontOf(study);
    const page = await this.offsetPage(`front:${studyId}`, q, front.trials);
    return {
      objectives: outcomesOf(study).objectives,
      referencePoint: front.referencePoint,
      hypervolume: front.hypervolume,
      frontSize: front.trials.length,
      evaluationCount: front.evaluationCount,
      feasibleCount: front.feasibleCount,
      trials: page.items.map((t) => reportTrial(study, t)),
      nextPageToken: page.nextPageToken,
    };
  }

  /** After each result in completion order, the front's hypervolume against one reference point (results/front.ts), in pages. */
  async frontHistory(tenantId: string, studyId: string, q: { pageSize?: number; pageToken?: string | null } = {}): Promise<FrontHistoryPage> {
    const study = await this.study(tenantId, studyId);
    const entry = await this.frontOf(study);
    // Computed once per change of the study, like the front: every page reads the same one.
    let h = entry.history;
    if (!h) {
      h = entry.history = frontHistory(outcomesOf(study), entry.completed);
      // Counted in the entry's bytes: set again while the cache still holds this very entry (its other parts' size is kept in baseBytes).
      if (this.fronts.get(study.tenantId, study.id) === entry) this.fronts.set(study.tenantId, study.id, entry);
    }
    const page = await this.offsetPage(`front-history:${studyId}`, q, h.points);
    return { referencePoint: h.referencePoint, points: page.items, nextPageToken: page.nextPageToken };
  }

  private async frontOf(study: Study): Promise<FrontEntry> {
    const version = `${study.createdAt}\u0000${study.updatedAt}\u0000${study.trialCounts.COMPLETED}`;
    const cached = this.fronts.get<FrontEntry>(study.tenantId, study.id);
    if (cached?.version === version) return cached;
    const completed = await this.storage.listCompletedTrials(study.id);
    const out: FrontEntry = { version, completed, front: frontOf(outcomesOf(study), completed) };
    // Keyed by the study alone: this version replaces the one before (or, too large to keep, removes it).
    this.fronts.set(study.tenantId, study.id, out);
    return out;
  }

  /** A page of a list computed in memory: the token holds the offset reached (signed, scoped like every page token). */
  private offsetPage<T>(scope: string, q: { pageSize?: number; pageToken?: string | null }, all: readonly T[]): Promise<{ items: T[]; nextPageToken: string | null }> {
    const size = q.pageSize ?? FRONT_LIMITS.defaultPageSize;
    return this.pages.page(scope, q.pageToken, async (after) => {
      const from = after === null ? 0 : Number(after);
      if (!Number.isSafeInteger(from) || from < 0 || from > all.length) throw new InvalidPageTokenError();
      const to = Math.min(all.length, from + size);
      return { items: all.slice(from, to), next: to < all.length ? String(to) : null };
    });
  }

  async distribution(tenantId: string, studyId: string): Promise<DistributionReport> {
    const study = await this.study(tenantId, studyId);
    const space = spaceOf(study);
    const state = await this.storage.getEngineState(studyId);
    const dist = userDistribution(space, state ? internalDistribution(state.state, space) : priorDistribution(space));
    return {
      generation: state?.generation ?? study.generation,
      mean: dist.mean,
      meanTransformed: dist.meanTransformed,
      covariance: dist.covariance,
      std: dist.std,
      scale: space.numeric.map((p) => p.scale),
      probabilities: dist.probabilities,
    };
  }

  /**
   * The engine's prediction at the distribution mean, in the study's direction, computed once per
   * engine-state revision (a dashboard polling /best costs no engine time between updates). The
   * methods with a model keep it in their state (ProbNES stores the GP's inputs and targets), so
   * the estimate is asked without the history: reading every completed trial would make /best
   * O(trials).
   */
  private async estimate(study: Study, rec: EngineStateRecord): Promise<Prediction> {
    const none: Prediction = { predicted: null, predicted_std: null };
    if (!this.engine) return none;
    const key = `${study.id}\u0000${study.createdAt}\u0000${rec.revision}`;
    const cached = this.estimates.get(key);
    if (cached) {
      cached.usedAt = this.now().getTime();
      return cached.prediction;
    }
    const state = readEngineState(study.id, study.method, rec);
    let out: Prediction;
    try {
      const { result } = await this.engine.run({ op: 'estimate', method: study.method, state, history: [] }, { tenantId: study.tenantId, studyId: study.id });
      if (result.op !== 'estimate') return none;
      const { predicted, predicted_std, point } = result.estimate;
      out = { predicted: predicted === null ? null : objectiveValue(objectiveOf(study), predicted), predicted_std, ...(point ? { point } : {}) };
    } catch (err) {
      // A model that cannot predict (e.g. a degenerate fit) leaves the estimate empty rather than
      // failing a read-only report; anything else (engine busy included) is the caller's answer.
      if (err instanceof EngineError) out = none;
      else throw err;
    }
    if (this.estimates.size >= ESTIMATE_CACHE_SIZE) this.estimates.delete(this.estimates.keys().next().value!);
    this.estimates.set(key, { prediction: out, usedAt: this.now().getTime() });
    return out;
  }

  private async study(tenantId: string, studyId: string): Promise<Study> {
    const study = await this.storage.getStudy(tenantId, studyId);
    if (!study) throw new StudyNotFoundError(studyId);
    return readStudy(study);
  }
}

/** The engine's point when it has the space's shape (numeric coordinates, then one valid choice index per categorical parameter). */
function recommendedPoint(space: SearchSpace, point: number[] | undefined): number[] | null {
  if (!point) return null;
  const dn = space.numeric.length;
  if (point.length !== dn + space.categorical.length || !point.every(Number.isFinite)) return null;
  return space.categorical.every((p, j) => Number.isInteger(point[dn + j]) && point[dn + j]! >= 0 && point[dn + j]! < p.choices.length) ? point : null;
}

/** Running best and simple regret of completed trials in completion order (results/evaluations.ts). */
export function regretHistory(completed: readonly TrialRecord[], direction: Direction, knownOptimum: number | null): Evaluation[] {
  return runningRegret(objectiveOf({ direction }), completed, knownOptimum);
}

function spaceOf(study: Study): SearchSpace {
  return searchSpace(study.parameters, study.prior);
}

const mapNull = (v: number | null, f: (x: number) => number) => (v === null ? null : f(v));

function finiteOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
