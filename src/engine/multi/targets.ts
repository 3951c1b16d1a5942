/**
 * The scalar a single-objective method minimises for each evaluation of a study with several
 * objectives, constraints or infeasible points (ALGORITHM.md §32.2–§32.4), for one generation's
 * scalarisation.
 *
 * Glossary: an outcome is what the service reports for one evaluated point: the objective vector
 * F = (f_1, …, f_M) as minimised (the domain negated maximised ones), the constraint values
 * c = (c_1, …, c_K) (feasible when every c_k ≤ 0), or `infeasible` (no F, no c: the point could not
 * be evaluated). s(F) the scalarised value: the augmented Chebyshev s_w(F) (scalarize.ts) for M > 1,
 * f_1 itself for M = 1. CV = Σ_k max(0, c_k) the total violation.
 *
 * The targets, in order:
 * 1. Normalisation (M > 1): [lo_i, hi_i] the range of f_i over the FEASIBLE evaluations (every
 *    evaluation with an F when none is feasible): the scale of the part of objective space that
 *    matters; a violator far outside it only gets a large s, which step 2 caps anyway.
 * 2. Feasible: y = s(F). Violating (CV > 0), Deb (2000)'s order: y = max(s(F), ŷ) + scale·CV/v̄, with
 *    ŷ the largest s over the feasible evaluations (over every evaluation with an F when none is
 *    feasible), v̄ the median positive CV, and scale 1 for M > 1 (s is normalised, so a median
 *    violation costs one range) and, for M = 1, the range of f_1 over the feasible evaluations (the
 *    same one range in f_1's own units; 1 when it is 0).
 * 3. Infeasible: y = max_j y_j + 0.1·(max_j y_j − min_j y_j) over the evaluations of step 2 (a span
 *    of 0 counts as max(|max y|, 1)); 0 for all when no evaluation has an F.
 */
import { InvalidInputError } from '../errors.js';
import { nonDominated, totalViolation } from './pareto.js';
import { augmentedChebyshev, observedRange, PAREGO_RHO } from './scalarize.js';

/** What the targets read of an observation (strategies/types.ts Observation has these fields). */
export interface Outcome {
  y: number;
  f?: number[];
  c?: number[];
  infeasible?: true;
}

/** One generation's scalarisation: the number of objectives and, for M > 1, the weights (on the simplex). */
export interface TargetSpec {
  objectives: number;
  weights: readonly number[] | null;
  rho?: number;
  /**
   * What normalises the objectives (M > 1): the range over the feasible evaluations ('feasible', the
   * default), or the range of their non-dominated subset, ideal to nadir ('front'; an objective whose
   * front range is 0 keeps the feasible range).
   */
  normalise?: 'feasible' | 'front';
  /**
   * With 'front': the study's reference point, as minimised. Objective i's range then runs from its
   * ideal to r_i (where r_i lies above the ideal): the hypervolume the study measures counts a gain in
   * f_i in units of the box up to r, so the scalarisation weighs it so too, and a point beyond the
   * current front's nadir but inside r is not penalised as if the front's span were the scale.
   */
  reference?: readonly number[] | null;
  /** Violators: Deb's order max(s, ŷ) + scale·CV/v̄ ('deb', the default) or the smooth s + scale·CV/v̄ ('additive'). */
  penalty?: 'deb' | 'additive';
}

/** The fraction of the span of the evaluated targets an infeasible point is placed beyond the worst (§32.4). */
export const INFEASIBLE_MARGIN = 0.1;

/** CV = Σ_k max(0, c_k) (0 without constraint values). */
export function violation(c: readonly number[] | undefined): number {
  return c ? totalViolation(c) : 0;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 === 1 ? s[k] : (s[k - 1] + s[k]) / 2;
}

/** The objective vector of an evaluated outcome (F, or [y] for one objective without `f`). */
function objectivesOf(o: Outcome, m: number, j: number): number[] {
  const f = o.f ?? (m === 1 ? [o.y] : undefined);
  if (!f || f.length !== m) throw new InvalidInputError(`observation ${j} has ${f ? f.length : 'no'} objective values, expected ${m}`);
  for (const v of f) if (!Number.isFinite(v)) throw new InvalidInputError(`observation ${j} has a non-finite objective value`);
  if (o.c) for (const v of o.c) if (!Number.isFinite(v)) throw new InvalidInputError(`observation ${j} has a non-finite constraint value`);
  return f;
}

/**
 * Everything the targets of one generation share, computed once over the study's evaluations: the
 * normalisation, ŷ, v̄, the violation scale and the infeasible value. Plain JSON.
 */
export interface TargetContext {
  objectives: number;
  /** The scalarisation for M > 1 (null for one objective: s(F) = f_1). */
  scal: { weights: number[]; lower: number[]; upper: number[]; rho: number } | null;
  /** ŷ (−∞ when no evaluation has an F). */
  yHat: number;
  /** v̄ (1 when nothing is violated). */
  vBar: number;
  /** The factor of CV/v̄ (1 for M > 1, f_1's feasible range for M = 1). */
  scale: number;
  /** The value of an infeasible point. */
  infeasible: number;
  /** TargetSpec.penalty. */
  additive?: boolean;
}

/** Steps 1–3's shared quantities over `outcomes` (the study's evaluations). */
export function targetContext(outcomes: readonly Outcome[], spec: TargetSpec): TargetContext {
  const m = spec.objectives;
  if (!(Number.isInteger(m) && m >= 1)) throw new InvalidInputError(`the number of objectives must be an integer ≥ 1, got ${m}`);
  if (m > 1 && spec.weights?.length !== m) throw new InvalidInputError(`${m} objectives need ${m} weights`);
  const F: number[][] = [];
  const cv: number[] = [];
  outcomes.forEach((o, j) => {
    if (o.infeasible) return;
    F.push(objectivesOf(o, m, j));
    cv.push(violation(o.c));
  });
  const anyFeasible = cv.some((v) => v === 0);
  const inBasis = (k: number): boolean => !anyFeasible || cv[k] === 0;
  const basis = F.filter((_, k) => inBasis(k));
  const { lower, upper } = basis.length > 0 ? observedRange(basis) : { lower: new Array<number>(m).fill(Infinity), upper: new Array<number>(m).fill(-Infinity) };
  if (m > 1 && spec.normalise === 'front') {
    const hiFront = new Array<number>(m).fill(-Infinity);
    for (const k of nonDominated(basis)) for (let i = 0; i < m; i++) hiFront[i] = Math.max(hiFront[i], basis[k][i]);
    for (let i = 0; i < m; i++) if (hiFront[i] > lower[i]) upper[i] = hiFront[i];
    const r = spec.reference;
    if (r && r.length === m) for (let i = 0; i < m; i++) if (Number.isFinite(r[i]) && r[i] > lower[i]) upper[i] = r[i];
  }
  const scal = m > 1 ? { weights: [...spec.weights!], lower, upper, rho: spec.rho ?? PAREGO_RHO } : null;
  const range = upper[0] - lower[0];
  const ctx: TargetContext = { objectives: m, scal, yHat: -Infinity, vBar: 1, scale: m > 1 ? 1 : range > 0 ? range : 1, infeasible: 0, ...(spec.penalty === 'additive' ? { additive: true } : {}) };
  if (F.length === 0) return ctx;
  const s = F.map((f) => scalarised(ctx, f));
  for (let k = 0; k < F.length; k++) if (inBasis(k)) ctx.yHat = Math.max(ctx.yHat, s[k]);
  const violated = cv.filter((v) => v > 0);
  if (violated.length > 0) ctx.vBar = median(violated);
  let hi = -Infinity;
  let lo = Infinity;
  for (let k = 0; k < F.length; k++) {
    const y = penalised(ctx, s[k], cv[k]);
    hi = Math.max(hi, y);
    lo = Math.min(lo, y);
  }
  const span = hi > lo ? hi - lo : Math.max(Math.abs(hi), 1);
  ctx.infeasible = hi + INFEASIBLE_MARGIN * span;
  return ctx;
}

function scalarised(ctx: TargetContext, f: readonly number[]): number {
  return ctx.scal ? augmentedChebyshev(ctx.scal, f) : f[0];
}

function penalised(ctx: TargetContext, s: number, cv: number): number {
  if (!(cv > 0)) return s;
  return (ctx.additive ? s : Math.max(s, ctx.yHat)) + (ctx.scale * cv) / ctx.vBar;
}

/** The value to minimise for one outcome under a generation's context (step 2 or 3). */
export function targetOf(ctx: TargetContext, o: Outcome, j = 0): number {
  if (o.infeasible) return ctx.infeasible;
  return penalised(ctx, scalarised(ctx, objectivesOf(o, ctx.objectives, j)), violation(o.c));
}

/** The value to minimise for every outcome, in order, with the context of the outcomes themselves. */
export function scalarTargets(outcomes: readonly Outcome[], spec: TargetSpec): number[] {
  const ctx = targetContext(outcomes, spec);
  return outcomes.map((o, j) => targetOf(ctx, o, j));
}
