/**
 * What a study's model says, for people and plots: the posterior mean and std of the objective on
 * a grid over two numeric parameters (the other numeric ones at the search distribution's mean, each
 * categorical one at the choice the query names in `fixed`, else its most probable choice), with
 * that distribution's 1σ and 2σ ellipses and the evaluated points; and each parameter's importance,
 * numeric or categorical, read from the GP's fitted length scales. Both at any generation the study
 * has a state for.
 *
 * The GP's input is φ = [u, one-hot(c_1), …]: the numeric parameters' internal coordinates and one
 * one-hot block per categorical parameter, the encoding and kernel of the mixed methods
 * (gp/mixed-kernel.ts, ALGORITHM.md §27), so the model sees what the choices change.
 *
 * Which objective: the one `objective` names (default: the first declared; a study that declares
 * none has one, `value`), and the answer names it. A study of one objective is modelled as below. A
 * study of several objectives is modelled one objective at a time, always by a GP fitted for the
 * view (`source: "fitted"`): its methods' GPs model a random scalarisation of the objectives that
 * changes every generation (ALGORITHM.md §32.2), not something to show. That GP learns the
 * objective's values (as the engine minimises them: maximised objectives negated) of the completed
 * trials that have values (a trial over a constraint has them; one reported infeasible has none),
 * and the answer's means are back in the objective's own units and direction.
 *
 * Which GP:
 * - prob-cmaes, prob-xnes, prob-snes: the GP the method stored in that generation's state, at its
 *   own MAP hyperparameters (nothing is refitted; `source: "method"`). On a mixed space the state's
 *   X is already φ (probnes-mixed.ts).
 * - bo, pibo: the stored MAP hyperparameters, conditioned on the points the method had then
 *   (completed at or before the state was written; `source: "method"`). On a mixed space BO's
 *   input is [box-normalised u, one-hot(c)] (bo-mixed.ts): the same φ with the box scaling.
 * - every other method (no model of its own), and the generations before a method's first fit:
 *   a GP fitted here for the view on φ, with the ProbNES priors in φ's dimension, to the
 *   points completed while that generation was current (before the next generation's state was
 *   written; for the latest generation, every completed point) (`source: "fitted"`). Fewer than
 *   two such points: 409 `model_unavailable`.
 * Cost is bounded, whatever the study's size: at most MAX_VIEW_POINTS training points (the most
 * recently completed, in completion order: completed_at, then trial id) and GRID_MAX_N² grid points,
 * computed in the engine pool's lane for views (off the event loop, never on a slot the
 * optimisation loops use; fair-runner.ts). A view reads the study, at most two engine
 * states (a method's GP is stored in its state with its own active set) and at most
 * MAX_VIEW_POINTS + MAX_DRAWN_POINTS trials (Storage.listRecentCompleted: one index range each),
 * never the study's whole trial list: the grid draws the points in the model and the
 * MAX_DRAWN_POINTS most recently completed ones, and its axes' range covers those. A study of
 * several objectives has no such index (study_evaluations holds one value per trial): its view reads
 * the COMPLETED trials among the study's last MULTI_VIEW_WINDOW trials by id, one index range too,
 * and keeps the same points (recentCompletedOf).
 * Answers are cached per tenant (model-view-cache.ts) under what they depend on: the study, the
 * engine state's generation and revision, the view and its query, and a digest of the trials read;
 * a repeated request does the reads but no engine call, and identical requests in flight share one.
 */
import { createHash } from 'node:crypto';
import { activeMask, impute, encodeMixed, methodFacts, modeOf, solveLower, type ChoiceRelevance, type GpHyper, type MethodName, type ModelViewResult, type ModelViewTask, type StoredViewGp, type ViewModelSpec } from '../../engine/index.js';
import type { EngineStateRecord, LoopStore, ReportsStore, StudiesStore, TrialRecord } from '../../storage/index.js';
import { DomainError, pointer, StudyNotFoundError, ValidationError, type FieldError } from '../common/errors.js';
import type { EngineRunner } from '../pool/engine-pool.js';
import type { GridAxesTask } from '../pool/engine-tasks.js';
import type { EngineCaller } from '../pool/fair-runner.js';
import { readStudy, type Study } from './codec.js';
import { engineValue, ModelHistory, objectiveOf, objectiveValue, outcomesOf, severalObjectives, valuesOf, type NamedObjective } from '../results/index.js';
import { isStopped } from './stopping-rule.js';
import { centrePoint, internalDistribution, type InternalDistribution } from './distribution.js';
import type { ParamValue } from './study-request.js';
import { ModelViewCache } from './model-view-cache.js';
import { isNumeric, type NumericParameterSpec } from './study-spec.js';
import { stepOf } from './grid.js';
import { categoryPriors, choiceIndex, engineConditions, searchSpace, toUserRaw, type SearchSpace } from './transforms.js';

/** Training points a view's GP conditions on (the most recent ones): bounds its O(n³) cost. */
export const MAX_VIEW_POINTS = 300;
/**
 * Evaluated points the grid draws besides those in the model: the most recently completed ones (a
 * contour with more would be unreadable; it bounds the view's reads and its answer).
 */
export const MAX_DRAWN_POINTS = 1000;
/** The last trials by id a view of a study of several objectives reads (recentCompletedOf): its reads' bound. */
export const MULTI_VIEW_WINDOW = MAX_VIEW_POINTS + MAX_DRAWN_POINTS;
/**
 * Training points of a GP the view conditions on (fitted, or BO's) when φ is wider than a numeric
 * study can be (100 inputs): the MAP objective's gradient costs O(n²D), so n shrinks as 1/√D to
 * keep n²D at most MAX_VIEW_POINTS²·100 (at least 30 points).
 */
function viewPointCap(space: SearchSpace): number {
  const { D } = layout(space);
  return D <= 100 ? MAX_VIEW_POINTS : Math.max(30, Math.floor(MAX_VIEW_POINTS * Math.sqrt(100 / D)));
}

/** Grid points per axis: at most GRID_MAX_N² predictions per request. */
export const GRID_MAX_N = 60;
export const GRID_DEFAULT_N = 30;
/** Points along each drawn ellipse. */
const ELLIPSE_POINTS = 73;

export class ModelUnavailableError extends DomainError {
  constructor(message: string) {
    super('conflict', 'model_unavailable', message);
  }
}

export interface GridQuery {
  x: string;
  y: string;
  n?: number;
  generation?: number;
  /** JSON object: categorical parameter name → the choice to condition the grid on. */
  fixed?: string;
  /** The objective's name (default: the study's first). */
  objective?: string;
}

export interface ImportanceQuery {
  generation?: number;
  /** The objective's name (default: the study's first). */
  objective?: string;
}

export interface Axis {
  name: string;
  scale: 'linear' | 'log';
  /** The parameter's step (its values are low + k·step), null for a continuous one: the model itself is continuous. */
  step: number | null;
  /** Grid values in user units (evenly spaced in the parameter's scale: ln x for log parameters). */
  values: number[];
}

export interface GridView {
  generation: number;
  /** The objective modelled (its name; `value` for a study that declares none). */
  objective: string;
  source: 'method' | 'fitted';
  nPoints: number;
  x: Axis;
  y: Axis;
  /** Posterior mean and latent std of the objective, in its own units: [iy][ix]. */
  mean: number[][];
  std: number[][];
  /** The posterior mean as the engine minimises it (results lossOf: lower is better whatever the direction): [iy][ix]. */
  loss: number[][];
  /** The values every other parameter is held at (user units; categorical: the choice asked for, else the most probable). */
  fixed: Record<string, ParamValue>;
  /** The search distribution's (x, y) marginal: 1σ and 2σ ellipses in user units, and its centre. */
  distribution: { mean: [number, number]; ellipses: { sigma: number; points: [number, number][] }[] };
  /** sameChoices: the trial's categorical values are those of `fixed` (always true on a numeric space). */
  points: { trialId: number; x: number; y: number; value: number; generation: number; inModel: boolean; sameChoices: boolean }[];
}

export interface ImportanceView {
  generation: number;
  objective: string;
  source: 'method' | 'fitted';
  nPoints: number;
  uncertainty: 'joint' | 'conditional' | null;
  /** In the order of the study's parameters; a categorical one has no scale and no length scale. */
  parameters: {
    name: string;
    type: 'numeric' | 'categorical';
    scale: 'linear' | 'log' | null;
    lengthscale: number | null;
    lengthscaleInterval: [number, number] | null;
    relevance: number;
    relevanceInterval: [number, number] | null;
  }[];
}

/** The method's GP is a ProbNES one (its points in the state) or BO's (registry facts: `family`). */
const isProbnes = (method: MethodName) => methodFacts(method).family === 'probnes';
const isBo = (method: MethodName) => methodFacts(method).family === 'bo';
/** 95% two-sided normal quantile for the intervals of log ℓ. */
const Z95 = 1.959963984540054;

type ViewContext = Awaited<ReturnType<ModelViews['context']>>;

export class ModelViews {
  /**
   * Answers by what they depend on, and the hyperparameters of GPs fitted for views (so the grid
   * and importance of one generation fit once), per tenant and bounded (model-view-cache.ts).
   */
  readonly cache: ModelViewCache;

  constructor(private readonly deps: { storage: StudiesStore & LoopStore & ReportsStore; engine: EngineRunner; cache?: ModelViewCache }) {
    this.cache = deps.cache ?? new ModelViewCache();
  }

  async grid(tenantId: string, studyId: string, q: GridQuery): Promise<GridView> {
    const ctx = await this.context(tenantId, studyId, q.generation, q.objective, true);
    const ix = numericIndex(ctx.space, q.x, '/x');
    const iy = numericIndex(ctx.space, q.y, '/y');
    if (ix === iy) throw new ValidationError([{ path: '/y', message: `must name a parameter other than x (${JSON.stringify(q.x)})` }]);
    const n = q.n ?? GRID_DEFAULT_N;
    const internalDist = internalDistribution(ctx.state.state, ctx.space);
    // The choice of each categorical parameter: the query's, else the distribution's most probable.
    const asked = parseFixed(ctx.space, q.fixed);
    const choices = activateAxes(ctx.space, [ix, iy], asked, internalDist.categorical.map((qj, j) => asked.get(j) ?? modeOf(qj)), internalDist.categorical);
    // The resolved choices are part of the key: two choices never share an answer.
    const key = viewKey('grid', ctx, [ctx.space.numeric[ix]!.name, ctx.space.numeric[iy]!.name, n, JSON.stringify(choices)]);
    return this.cache.getOrCompute(tenantId, key, () => this.computeGrid(tenantId, studyId, ctx, ix, iy, n, internalDist, choices));
  }

  private async computeGrid(tenantId: string, studyId: string, ctx: ViewContext, ix: number, iy: number, n: number, internalDist: ReturnType<typeof internalDistribution>, choices: number[]): Promise<GridView> {
    const { space } = ctx;
    // Only the (x, y) marginal is drawn: O(d²) on the event loop, where the whole distribution in
    // user units (userDistribution) is O(d³), 2·10⁶ products at d = 100 on every grid request.
    const marg = marginal2(space, internalDist, ix, iy);
    const px = space.numeric[ix]!, py = space.numeric[iy]!;
    const completed = ctx.completed;
    const tOf = (p: NumericParameterSpec, v: number) => (p.scale === 'log' ? Math.log(v) : v);
    const fromT = (p: NumericParameterSpec, t: number) => (p.scale === 'log' ? Math.exp(t) : t);
    const range = (k: 0 | 1, p: NumericParameterSpec) => {
      const m = marg.mean[k], sd = Math.sqrt(Math.max(k === 0 ? marg.cxx : marg.cyy, 0));
      const ts = completed.map((t) => tOf(p, t.parameters[p.name] as number)).filter(Number.isFinite);
      let lo = Math.min(m - 3 * sd, ...ts), hi = Math.max(m + 3 * sd, ...ts);
      if (p.bounds) [lo, hi] = [Math.max(lo, tOf(p, p.bounds[0])), Math.min(hi, tOf(p, p.bounds[1]))];
      if (!(hi > lo)) [lo, hi] = [lo - 1, hi + 1];
      return Array.from({ length: n }, (_, k) => lo + ((hi - lo) * k) / (n - 1));
    };
    const tx = range(0, px), ty = range(1, py);

    // Every grid point: x, y varied, the other numeric parameters at the distribution's mean, each
    // categorical one at its resolved choice. In internal coordinates u = L0⁻¹(t − m0) the point is
    // affine in (tx, ty): the centre plus (tx − its x)·L0⁻¹e_x plus (ty − its y)·L0⁻¹e_y, O(d) per
    // point instead of a triangular solve (O(d²)) each, which at n = 60 and d = 100 held the event
    // loop for tens of milliseconds per request.
    // `fixed` by position and without a prototype: a stored parameter named `__proto__` (accepted
    // before such names were refused) is an own key like any other, not Object.prototype.
    const centre = [...centrePoint(internalDist).slice(0, space.numeric.length), ...choices];
    const base = toUserRaw(space, centre);
    const fixed = Object.create(null) as Record<string, ParamValue>;
    space.parameters.forEach((p, i) => {
      if (p.name !== px.name && p.name !== py.name) fixed[p.name] = base[i]!;
    });
    const d = space.numeric.length;
    const unit = (i: number) => Array.from(solveLower(space.L0, Array.from({ length: d }, (_, k) => (k === i ? 1 : 0))));
    // Points are [u, c] (the engine encodes the choices as φ's one-hot blocks); the worker builds
    // the n² of them from these (gridPoints), so that the event loop neither computes nor copies them.
    const axes = { centre, cx: unit(ix), cy: unit(iy), dx: tx.map((a) => a - marg.mean[0]), dy: ty.map((b) => b - marg.mean[1]), d, inputs: centre.length };
    const result = await this.run({ view: 'grid-axes', model: ctx.model, axes }, tenantId, ctx.fitKey, { tenantId, studyId });
    if (result.view !== 'grid') throw new Error('model view: unexpected result');
    const chosen = space.categorical.map((p, j) => p.choices[choices[j]!]);
    const sameChoices = (t: TrialRecord) => space.categorical.every((p, j) => t.parameters[p.name] === chosen[j]);
    const rows = (vals: number[], f: (v: number) => number) => ty.map((_, r) => vals.slice(r * n, (r + 1) * n).map(f));

    const { cxx, cxy, cyy } = marg;
    const mid = marg.mean;
    return {
      generation: ctx.generation,
      objective: ctx.objective.name,
      source: ctx.source,
      nPoints: ctx.nPoints,
      x: { name: px.name, scale: px.scale, step: stepOf(px), values: tx.map((t) => fromT(px, t)) },
      y: { name: py.name, scale: py.scale, step: stepOf(py), values: ty.map((t) => fromT(py, t)) },
      // In the objective's own units and direction (a maximised one's mean is high where it is good).
      mean: rows(result.mean, (v) => objectiveValue(ctx.objective, v)),
      // The engine's mean is already the loss: the value it minimises.
      loss: rows(result.mean, (v) => v),
      std: rows(result.std, (v) => v),
      fixed,
      distribution: {
        mean: [fromT(px, mid[0]), fromT(py, mid[1])],
        ellipses: [1, 2].map((sigma) => ({ sigma, points: ellipse(mid, cxx, cxy, cyy, sigma).map(([a, b]) => [fromT(px, a), fromT(py, b)] as [number, number]) })),
      },
      // A trial in which an axis parameter was inactive has no value to place it at.
      points: completed.filter((t) => typeof t.parameters[px.name] === 'number' && typeof t.parameters[py.name] === 'number').map((t) => ({
        trialId: t.trialId,
        x: t.parameters[px.name] as number,
        y: t.parameters[py.name] as number,
        value: ctx.valueOf(t)!,
        generation: t.generation,
        inModel: ctx.inModel.has(t.trialId),
        sameChoices: sameChoices(t),
      })),
    };
  }

  async importance(tenantId: string, studyId: string, q: ImportanceQuery): Promise<ImportanceView> {
    const ctx = await this.context(tenantId, studyId, q.generation, q.objective, false);
    return this.cache.getOrCompute(tenantId, viewKey('importance', ctx, []), () => this.computeImportance(tenantId, studyId, ctx));
  }

  private async computeImportance(tenantId: string, studyId: string, ctx: ViewContext): Promise<ImportanceView> {
    const d = ctx.space.numeric.length;
    const L0 = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => ctx.space.L0.data[i * d + j]!));
    // A categorical parameter's yardstick is its prior over the choices, as the prior std is a numeric one's.
    const result = await this.run({ view: 'importance', model: ctx.model, L0, choicePriors: categoryPriors(ctx.space) }, tenantId, ctx.fitKey, { tenantId, studyId });
    if (result.view !== 'importance') throw new Error('model view: unexpected result');
    const imp = result.importance;
    // A flat posterior along a length scale (no curvature: the data say nothing about it) has an
    // infinite sd, hence no finite interval: null, "unavailable", rather than an unbounded end.
    const interval = (v: number, sd: number | null, sign: 1 | -1): [number, number] | null => {
      if (sd === null) return null;
      const r: [number, number] = [v * Math.exp(-sign * Z95 * sd), v * Math.exp(sign * Z95 * sd)];
      return Number.isFinite(r[0]) && Number.isFinite(r[1]) ? r : null;
    };
    return {
      generation: ctx.generation,
      objective: ctx.objective.name,
      source: ctx.source,
      nPoints: imp.n,
      uncertainty: imp.uncertainty,
      // In the study's order: numeric parameter i is the GP's i-th input, categorical parameter j
      // the j-th one-hot block after them.
      parameters: ctx.space.parameters.map((p) => {
        const i = ctx.space.numeric.indexOf(p as NumericParameterSpec);
        if (i >= 0) {
          const e = imp.parameters[i]!;
          const relevance = e.priorStd / e.lengthscale;
          return {
            name: p.name,
            type: 'numeric' as const,
            scale: ctx.space.numeric[i]!.scale,
            lengthscale: e.lengthscale,
            lengthscaleInterval: interval(e.lengthscale, e.logSd, 1),
            relevance,
            relevanceInterval: interval(relevance, e.logSd, 1),
          };
        }
        const c: ChoiceRelevance = imp.categorical[ctx.space.categorical.indexOf(p as (typeof ctx.space.categorical)[number])]!;
        return { name: p.name, type: 'categorical' as const, scale: null, lengthscale: null, lengthscaleInterval: null, relevance: c.relevance, relevanceInterval: interval(c.relevance, c.logSd, 1) };
      }),
    };
  }

  /**
   * Runs in the engine pool's lane for views (fair-runner.ts): round robin between tenants, at most
   * a few per tenant (429 beyond), never on a slot the optimisation loops use.
   */
  private async run(task: ModelViewTask | GridAxesTask, tenantId: string, fitKey: string | null, caller: EngineCaller): Promise<ModelViewResult> {
    const cached = fitKey === null ? undefined : this.cache.get<GpHyper>(tenantId, fitKey);
    const model = cached ? { ...task.model, fittedHyper: cached } : task.model;
    const { result } = await this.deps.engine.run({ op: 'model-view', task: { ...task, model } as ModelViewTask | GridAxesTask }, caller);
    if (result.op !== 'model-view') throw new Error('model view: unexpected engine result');
    if (fitKey !== null && result.view.fitted && !cached) this.cache.set(tenantId, fitKey, result.view.fitted);
    return result.view;
  }

  /**
   * Storage.listRecentCompleted for the view: the last `limit` COMPLETED trials with a value, in
   * completion order. It reads study_evaluations, which holds one-objective results only (and only
   * feasible ones: a result over a constraint is never a best, results/evaluations.ts), so for several
   * objectives the same list is cut here from the COMPLETED trials among the study's last
   * MULTI_VIEW_WINDOW trials by id (one range of the (study, state, trial id) index, read once per
   * request, so the read is bounded whatever the study's size): those with values, a trial over a
   * constraint included, in completion order. An old generation of a large study may then find fewer
   * points than it had (a 409 when fewer than two).
   */
  private async recentCompletedOf(studyId: string, trials: number, shown: ViewObjective): Promise<(q: { limit: number; completedBy: string | null }) => Promise<TrialRecord[]>> {
    if (!shown.several) return (q) => this.deps.storage.listRecentCompleted(studyId, q);
    // Trial ids run 1 … trials (every state counted): the window is the last MULTI_VIEW_WINDOW of them.
    const page = await this.deps.storage.listTrials(studyId, { state: 'COMPLETED', after: String(Math.max(0, trials - MULTI_VIEW_WINDOW)), limit: MULTI_VIEW_WINDOW });
    const withValues = page.items.filter((t) => shown.valueOf(t) !== null).sort((a, b) => ((a.completedAt ?? '') < (b.completedAt ?? '') ? -1 : (a.completedAt ?? '') > (b.completedAt ?? '') ? 1 : a.trialId - b.trialId));
    return async ({ limit, completedBy }) => (completedBy === null ? withValues : withValues.filter((t) => (t.completedAt ?? '') <= completedBy)).slice(-limit);
  }

  /**
   * The study, the objective asked for, the engine state of the generation asked for, the GP to
   * view, and (`drawn`: for the grid) the evaluated points to draw: those in the model and the
   * MAX_DRAWN_POINTS most recent.
   */
  private async context(tenantId: string, studyId: string, generation: number | undefined, objectiveName: string | undefined, drawn: boolean) {
    const record = await this.deps.storage.getStudy(tenantId, studyId);
    if (!record) throw new StudyNotFoundError(studyId);
    const study = readStudy(record);
    const space = searchSpace(study.parameters, study.prior);
    const shown = viewObjective(study, objectiveName);
    const state = await this.deps.storage.getEngineState(studyId, generation);
    if (!state) {
      throw new ValidationError([{ path: '/generation', message: `the study has no generation ${generation} (its latest is ${study.generation})` }]);
    }
    // A method's own GP was fitted to what was completed when its state was written; a GP fitted
    // for the view learns from what was completed while the generation was current (up to now,
    // for the latest one): the last MAX_VIEW_POINTS of those.
    // With several objectives the method's GP models a scalarisation, never shown: a GP is fitted.
    const owns = !shown.several && methodGp(study.method, state, space);
    const next = !owns && state.generation < study.generation ? await this.deps.storage.getEngineState(studyId, state.generation + 1) : null;
    const completedBy = owns ? state.createdAt : (next?.createdAt ?? null);
    const valueOf = shown.valueOf;
    const usable = (ts: TrialRecord[]) => ts.filter((t) => valueOf(t) !== null && t.point !== null);
    const recentCompleted = await this.recentCompletedOf(studyId, Object.values(record.trialCounts).reduce((a, b) => a + b, 0), shown);
    const latest = drawn ? await recentCompleted({ limit: MAX_DRAWN_POINTS, completedBy: null }) : [];
    const recent = usable(latest);
    // ProbNES's own GP holds its points in the state: the importance view needs no trial at all.
    const needsData = drawn || !(owns && isProbnes(study.method));
    let data: TrialRecord[] = [];
    if (needsData) {
      // `latest` is a suffix of the completion order (all of it if shorter than asked for): when it
      // holds MAX_VIEW_POINTS completed by `completedBy`, or everything, those are the ones; else read them.
      const by = latest.filter((t) => completedBy === null || (t.completedAt ?? '') <= completedBy);
      const last = drawn && (by.length >= MAX_VIEW_POINTS || latest.length < MAX_DRAWN_POINTS) ? by.slice(-MAX_VIEW_POINTS) : await recentCompleted({ limit: MAX_VIEW_POINTS, completedBy });
      // On a wide φ (many choices) fewer points, so that the fit costs no more than a numeric study's.
      data = owns && isProbnes(study.method) ? usable(last) : usable(last).slice(-viewPointCap(space));
    }
    // Drawn: the model's points and the most recent ones, by trial id.
    const byId = new Map<number, TrialRecord>();
    for (const t of [...data, ...recent]) byId.set(t.trialId, t);
    const completed = [...byId.values()].sort((a, b) => a.trialId - b.trialId);
    const { model, source, nPoints } = viewModel(study, space, state, data, shown);
    // The same points (ids and the objective's values, what the GP learns) give the same fit: the
    // key names the objective and them all (by digest), so two objectives never share a fit.
    const valuesDigest = (ts: TrialRecord[]) => digest(ts.map((t) => `${t.trialId}:${valueOf(t)}`).join(','));
    const dataDigest = valuesDigest(data);
    const fitKey = source === 'fitted' ? JSON.stringify(['fit', studyId, record.createdAt, state.generation, shown.objective.name, dataDigest]) : null;
    // What an answer depends on besides the query: the objective, the state (generation, revision),
    // the points in the model and, for the grid, the points drawn (ids, values; a trial's parameters
    // never change).
    const dependsOn = [studyId, record.createdAt, shown.objective.name, state.generation, state.revision, dataDigest, drawn ? valuesDigest(completed) : ''];
    return { study, space, state, generation: state.generation, objective: shown.objective, valueOf, completed, model, source, nPoints, fitKey, dependsOn, inModel: new Set(data.map((t) => t.trialId)) };
  }
}

/** The objective a view models, and how it reads a trial's value of it. */
interface ViewObjective {
  objective: NamedObjective;
  /** The study has several objectives: the view fits its own GP to this one's values. */
  several: boolean;
  /** The trial's value of the objective, in its own units; null without one (no result, or reported infeasible). */
  valueOf: (t: TrialRecord) => number | null;
}

/**
 * The objective `name` names among the study's (default: the first); an unknown name is a 400 at
 * /objective naming the study's objectives. A study of one objective reads `value` as it always did.
 */
function viewObjective(study: Study, name: string | undefined): ViewObjective {
  const outcomes = outcomesOf(study);
  const { objectives } = outcomes;
  const k = name === undefined ? 0 : objectives.findIndex((o) => o.name === name);
  if (k < 0) {
    const names = objectives.map((o) => JSON.stringify(o.name)).join(', ');
    throw new ValidationError([{ path: '/objective', message: `no objective ${truncate(JSON.stringify(name))}: the study's objective${objectives.length === 1 ? ' is' : 's are'} ${names}` }]);
  }
  const objective = objectives[k]!;
  // valuesOf: [value] for one objective, `values` for several (null for a trial reported infeasible).
  return { objective, several: severalObjectives(outcomes), valueOf: (t) => valuesOf(t)?.[k] ?? null };
}

/** A view's cache key: the view, what its context depends on, and its query parameters (resolved). */
function viewKey(view: 'grid' | 'importance', ctx: ViewContext, params: (string | number)[]): string {
  return JSON.stringify([view, ...ctx.dependsOn, ...params]);
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** K_j of each categorical parameter, and φ's width D = d + Σ K_j. */
function layout(space: SearchSpace): { d: number; K: number[]; D: number } {
  const K = space.categorical.map((p) => p.choices.length);
  const d = space.numeric.length;
  return { d, K, D: d + K.reduce((a, k) => a + k, 0) };
}

/**
 * Whether the state holds a GP of the method's own (ProbNES: the fitted GP; BO: its MAP
 * hyperparameters). On a mixed space, only one whose inputs have φ's width.
 */
function methodGp(method: MethodName, rec: EngineStateRecord, space: SearchSpace): boolean {
  const s = rec.state as Record<string, unknown>;
  const { d, K, D } = layout(space);
  if (K.length === 0) return (isProbnes(method) && isStoredProbnesGp(s.gp)) || (isBo(method) && isBoState(s));
  return (isProbnes(method) && isStoredProbnesGp(s.gp) && s.gp.X[0]!.length === D) || (isBo(method) && isBoState(s) && s.hyper.lengthscales?.length === D && s.box.lower.length === d);
}

/**
 * `fixed` of a grid query: a JSON object naming categorical parameters and the choice to hold each
 * at (matched by value and JSON type, as observations are). Every problem at /fixed/<name>.
 * Answers categorical index j → choice index.
 */
function parseFixed(space: SearchSpace, raw: string | undefined): Map<number, number> {
  const out = new Map<number, number>();
  if (raw === undefined) return out;
  const shape = 'must be a JSON object naming categorical parameters and a choice of each, e.g. {"kernel": "rbf"}';
  let obj: unknown;
  try {
    obj = JSON.parse(raw);
  } catch {
    throw new ValidationError([{ path: '/fixed', message: `${shape} (it is not JSON)` }]);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ValidationError([{ path: '/fixed', message: shape }]);
  const errors: FieldError[] = [];
  const categoricalNames = space.categorical.map((p) => p.name).join(', ') || 'the study has none';
  for (const [name, value] of Object.entries(obj)) {
    const path = pointer(['fixed', name]);
    const j = space.categorical.findIndex((p) => p.name === name);
    if (j < 0) {
      const numeric = space.numeric.some((p) => p.name === name);
      errors.push({ path, message: numeric ? `${JSON.stringify(name)} is numeric: numeric parameters are held at the distribution's mean; \`fixed\` names categorical parameters (${categoricalNames})` : `no categorical parameter ${JSON.stringify(name)} (${categoricalNames})` });
      continue;
    }
    const p = space.categorical[j]!;
    const k = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? choiceIndex(p, value) : -1;
    if (k < 0) {
      const shown = p.choices.slice(0, 10).map((c) => JSON.stringify(c)).join(', ') + (p.choices.length > 10 ? `, … (${p.choices.length} choices)` : '');
      errors.push({ path, message: `${truncate(JSON.stringify(value) ?? String(value))} is not a choice of ${JSON.stringify(name)} (choices match by value and JSON type: ${shown})` });
      continue;
    }
    out.set(j, k);
  }
  if (errors.length > 0) throw new ValidationError(errors.slice(0, 20));
  return out;
}

const truncate = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}…` : s);

/**
 * On a conditional space, the choices a grid is drawn at, changed where `fixed` leaves them free so
 * that both axes are active: an axis's parent (and its parent, up the chain) not named in `fixed`
 * takes its most probable choice among those that activate the axis. A contour along an inactive axis
 * is flat (the model ignores inactive coordinates), so the default shows one that is not; choices
 * named in `fixed` are kept as given.
 */
function activateAxes(space: SearchSpace, axes: number[], asked: Map<number, number>, choices: number[], q: number[][]): number[] {
  if (!space.conditions) return choices;
  const out = [...choices];
  const byAt = new Map(space.conditions.map((c) => [c.at, c]));
  const set = new Set<number>(); // changed for x: y does not undo it when the two need other branches
  for (const axis of axes) {
    for (let c = byAt.get(space.numericAt[axis]!); c; c = byAt.get(c.parentAt)) {
      const j = space.categoricalAt.indexOf(c.parentAt);
      if (asked.has(j) || set.has(j) || c.values.includes(out[j]!)) continue;
      out[j] = c.values.reduce((b, v) => (q[j]![v]! > q[j]![b]! ? v : b), c.values[0]!);
      set.add(j);
    }
  }
  return out;
}

/** The GP of the view (see the header): the method's own (one objective only), or one to fit to `data`. */
function viewModel(study: Study, space: SearchSpace, rec: EngineStateRecord, data: TrialRecord[], shown: ViewObjective): { model: ViewModelSpec; source: 'method' | 'fitted'; nPoints: number } {
  const { d: dim, K, D } = layout(space);
  const conditions = engineConditions(space);
  // A conditional space's views impute the inactive coordinates as its GP methods do (ALGORITHM.md §30).
  const categories = K.length > 0 ? { categories: K, ...(conditions.length > 0 ? { conditions } : {}) } : {};
  const identity = { inputShift: new Array<number>(D).fill(0), inputScale: new Array<number>(D).fill(1), ...categories };
  const s = rec.state as Record<string, unknown>;
  const owns = !shown.several && methodGp(study.method, rec, space);
  if (owns && isProbnes(study.method) && isStoredProbnesGp(s.gp)) {
    const g = s.gp;
    const stored: StoredViewGp = { hyper: g.hyper, X: g.X, targets: g.negYTilde ?? g.z!, quad: g.quad ?? null };
    // The GP models −ỹ = −(y − yMean)/yStd (probnes-core.ts): y = yMean − yStd·f.
    const w = g.X[0]?.length ?? D;
    return { model: { inputShift: new Array<number>(w).fill(0), inputScale: new Array<number>(w).fill(1), ...categories, yOffset: g.yMean, yScale: -g.yStd, priors: 'probnes', stored }, source: 'method', nPoints: g.X.length };
  }
  // One objective: as the methods see them (results/stopped.ts): `data` is in completion order, so a
  // stopped trial is read against the results before it among these (all of them, up to
  // MAX_VIEW_POINTS). Several: the objective's value as the engine minimises it (the methods read no
  // trial as stopped there either).
  const reader = new ModelHistory(objectiveOf(study));
  const y = shown.several ? data.map((t) => engineValue(shown.objective, shown.valueOf(t)!)) : data.map((t) => reader.next({ point: t.point, value: t.value!, stderr: t.stderr, stopped: isStopped(t) })!.y);
  if (data.length < 2) {
    const of = shown.several ? ` with a value of ${JSON.stringify(shown.objective.name)}` : '';
    throw new ModelUnavailableError(`generation ${rec.generation} has ${data.length} completed evaluation${data.length === 1 ? '' : 's'}${of} to learn from; a model needs at least two (choose a later generation)`);
  }
  if (owns && isBo(study.method) && isBoState(s)) {
    // BO's GP: numeric inputs in its box scaled to [0, 1], then the one-hot blocks as they are
    // (bo-mixed.ts), y standardised over the points (bo-core.ts).
    const lower = s.box.lower.slice(0, dim);
    const width = s.box.upper.slice(0, dim).map((u, j) => u - lower[j]!);
    const inputShift = [...lower, ...new Array<number>(D - dim).fill(0)];
    const inputScale = [...width, ...new Array<number>(D - dim).fill(1)];
    const imputed = (x: number[]) => (conditions.length > 0 ? impute(phiOf(x, dim, K), activeMask(conditions, x), dim, K, new Array<number>(dim).fill(0)) : phiOf(x, dim, K));
    const X = data.map((t) => imputed(t.point!).map((v, j) => (v - inputShift[j]!) / inputScale[j]!));
    const m = y.reduce((a, b) => a + b, 0) / y.length;
    const sd = Math.sqrt(y.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(y.length - 1, 1)) || 1;
    const stored: StoredViewGp = { hyper: s.hyper, X, targets: y.map((v) => (v - m) / sd), quad: null };
    return { model: { inputShift, inputScale, ...categories, yOffset: m, yScale: sd, priors: 'bo', stored }, source: 'method', nPoints: data.length };
  }
  // On φ: the internal points [u, c] as they are; the engine encodes the choices.
  return { model: { ...identity, yOffset: 0, yScale: 1, priors: 'probnes', stored: null, data: { U: data.map((t) => t.point!.slice(0, dim + K.length)), y } }, source: 'fitted', nPoints: data.length };
}

/** φ of an internal point [u, c] (choice indices rounded, as the mixed methods do). */
function phiOf(x: readonly number[], d: number, K: number[]): number[] {
  return K.length === 0 ? x.slice(0, d) : encodeMixed(x.map((v, j) => (j < d ? v : Math.round(v))), d, K);
}

interface StoredProbnesGp {
  hyper: StoredViewGp['hyper'];
  X: number[][];
  negYTilde?: number[];
  z?: number[];
  quad?: StoredViewGp['quad'];
  yMean: number;
  yStd: number;
}

function isStoredProbnesGp(g: unknown): g is StoredProbnesGp {
  const o = g as StoredProbnesGp | null;
  return !!o && typeof o === 'object' && Array.isArray(o.X) && o.X.length > 0 && !!o.hyper && typeof o.yMean === 'number' && typeof o.yStd === 'number' && Array.isArray(o.negYTilde ?? o.z);
}

function isBoState(s: Record<string, unknown>): s is Record<string, unknown> & { box: { lower: number[]; upper: number[] }; hyper: StoredViewGp['hyper'] } {
  const box = s.box as { lower?: unknown; upper?: unknown } | undefined;
  return !!s.hyper && !!box && Array.isArray(box.lower) && Array.isArray(box.upper);
}

function numericIndex(space: SearchSpace, name: string, path: string): number {
  const i = space.numeric.findIndex((p) => p.name === name);
  if (i >= 0) return i;
  const known = space.numeric.map((p) => p.name).join(', ');
  const categorical = space.parameters.some((p) => p.name === name && !isNumeric(p));
  throw new ValidationError([{ path, message: categorical ? `${JSON.stringify(name)} is categorical; the grid needs numeric parameters (${known})` : `no numeric parameter ${JSON.stringify(name)} (one of ${known})` }]);
}

/**
 * The (x, y) marginal of the search distribution in the parameters' scale t = m0 + L0·u: its mean
 * and 2×2 covariance (L0 Σ L0ᵀ)_{x,y}, with L0 lower triangular; the same numbers as
 * userDistribution's, for two parameters in O(d²).
 */
function marginal2(space: SearchSpace, dist: InternalDistribution, ix: number, iy: number): { mean: [number, number]; cxx: number; cxy: number; cyy: number } {
  const d = space.numeric.length;
  const L = (i: number, j: number) => space.L0.data[i * d + j]!;
  const meanT = (i: number) => {
    let s = space.m0[i]!;
    for (let k = 0; k <= i; k++) s += L(i, k) * dist.mean[k]!;
    return s;
  };
  // Row i of L0 Σ, then its product with row j of L0.
  const rowLS = (i: number) => Array.from({ length: d }, (_, c) => {
    let s = 0;
    for (let k = 0; k <= i; k++) s += L(i, k) * dist.cov[k]![c]!;
    return s;
  });
  const dot = (w: number[], j: number) => {
    let s = 0;
    for (let k = 0; k <= j; k++) s += w[k]! * L(j, k);
    return s;
  };
  const wx = rowLS(ix), wy = rowLS(iy);
  // Symmetric by construction, as userDistribution makes its covariance (the mean of both products).
  return { mean: [meanT(ix), meanT(iy)], cxx: dot(wx, ix), cxy: (dot(wx, iy) + dot(wy, ix)) / 2, cyy: dot(wy, iy) };
}

/** The k-σ ellipse of N(centre, [[cxx, cxy], [cxy, cyy]]): centre + k·L·(cos θ, sin θ), L L ᵀ = C. */
function ellipse(centre: [number, number], cxx: number, cxy: number, cyy: number, k: number): [number, number][] {
  const l11 = Math.sqrt(Math.max(cxx, 0));
  const l21 = l11 > 0 ? cxy / l11 : 0;
  const l22 = Math.sqrt(Math.max(cyy - l21 * l21, 0));
  return Array.from({ length: ELLIPSE_POINTS }, (_, i) => {
    const th = (2 * Math.PI * i) / (ELLIPSE_POINTS - 1);
    const a = Math.cos(th), b = Math.sin(th);
    return [centre[0] + k * l11 * a, centre[1] + k * (l21 * a + l22 * b)] as [number, number];
  });
}
