/**
 * lq-CMA-ES's surrogate on a space with categorical parameters (ALGORITHM.md §27, §30): quadratic.ts's
 * linear-quadratic model in the continuous coordinates plus one linear term per choice indicator,
 *
 *   f̂(u, c) = c₀ + bᵀv + vᵀHv + Σ_j Σ_{a=1}^{K_j−1} β_{j,a} [c_j = a],   v = u − u_best,
 *
 * choice 0 of each parameter the reference (its effect is in c₀), fitted as quadratic.ts fits
 * (rank-weighted least squares on the best 75%, the pseudoinverse where the system is rank-deficient).
 * An indicator is its own square, so quadratic terms in the indicators would repeat the linear ones;
 * products of an indicator with u (a choice that changes the quadratic's slope) are left out, which
 * keeps the coefficient count at p(u) + Σ_j (K_j − 1) and the model's kind ladder that of the
 * continuous part: the kind (linear, diagonal, full in u) is the most complex whose p, the indicators
 * counted, the data allow (0.75 N ≥ 1.1 p). Without continuous coordinates the model is linear in
 * the indicators.
 *
 * Conditional coordinates (§30) are imputed as the GP methods impute them: an inactive continuous
 * coordinate is set to 0 (the prior mean) and an inactive categorical parameter's indicators to 0,
 * in the data and wherever the model is evaluated, so two points that differ only in inactive
 * coordinates get the same value. With its parent's indicator (when its condition names one choice)
 * the model can still give a branch its own level, and a child's quadratic acts only where it is active.
 *
 * The model's optimum is that of the quadratic part in u (quadratic.ts modelOptimum): the indicators
 * do not interact with u, so the best continuous point is the same for every choice.
 *
 * Glossary: d_c continuous coordinates, then m categorical ones holding choice indices (K_j choices);
 * n_ind = Σ_j (K_j − 1) indicators.
 */
import { activeMask, type Condition } from '../distributions/conditional.js';
import {
  bestFirst, coefficientCount, features, fitSize, maxModelSize, modelKind, modelOptimum, rankWeighted, solveWeighted, type ModelKind, type Observed,
} from './quadratic.js';

/** Where a mixed point's parts are: d_c continuous coordinates, then one choice per categorical parameter. */
export interface MixedLayout {
  dc: number;
  K: readonly number[];
  /** Conditional coordinates (imputed); empty when there are none. */
  conditions: readonly Condition[];
}

/** A fitted mixed model as plain data (the indicators' coefficients after the quadratic part's). */
export interface MixedModel {
  kind: ModelKind;
  coefficients: number[];
  /** The continuous part of the best data point, imputed (the centre v = u − uBest). */
  uBest: number[];
  layout: MixedLayout;
}

/** n_ind = Σ_j (K_j − 1): one indicator per choice but the first. */
export function indicatorCount(K: readonly number[]): number {
  return K.reduce((a, k) => a + k - 1, 0);
}

/** p of a model kind: the quadratic part's coefficients in d_c dimensions plus the indicators'. */
export function mixedCoefficientCount(kind: ModelKind, dc: number, K: readonly number[]): number {
  return coefficientCount(kind, dc) + indicatorCount(K);
}

/** The most complex kind the data allow (0.75 N ≥ 1.1 p, indicators counted); linear without continuous coordinates. */
export function mixedModelKind(size: number, dc: number, K: readonly number[]): ModelKind {
  return dc === 0 ? 'linear' : modelKind(size, dc, indicatorCount(K));
}

/** The training-set size limit, as quadratic.ts maxModelSize with the indicators counted (p_full = 1 + n_ind without continuous coordinates). */
export function mixedMaxModelSize(dc: number, K: readonly number[], lambda: number): number {
  return maxModelSize(dc, lambda, indicatorCount(K));
}

/** The continuous part with inactive coordinates at 0, and the indicators (inactive parameters' all 0). */
function imputedParts(layout: MixedLayout, x: readonly number[]): { u: number[]; indicators: number[] } {
  const active = layout.conditions.length > 0 ? activeMask(layout.conditions, x) : null;
  const u = x.slice(0, layout.dc).map((v, i) => (active && !active[i] ? 0 : v));
  const indicators: number[] = [];
  layout.K.forEach((k, j) => {
    const c = Math.round(x[layout.dc + j]!);
    const on = !active || active[layout.dc + j];
    for (let a = 1; a < k; a++) indicators.push(on && c === a ? 1 : 0);
  });
  return { u, indicators };
}

function row(model: Pick<MixedModel, 'kind' | 'uBest' | 'layout'>, x: readonly number[]): number[] {
  const { u, indicators } = imputedParts(model.layout, x);
  return [...features(model.kind, u.map((v, i) => v - model.uBest[i]!)), ...indicators];
}

/**
 * Fits the model to `data` (any order), as quadratic.ts fitModel (its ranking, weights and solve): the
 * kind the data allow, the best fitSize(·) points by y weighted linearly from MAX_WEIGHT down to 1 by
 * rank, β = (W Z)⁺ W y.
 */
export function fitMixedModel(data: readonly Observed[], layout: MixedLayout): MixedModel {
  const order = bestFirst(data);
  const kind = mixedModelKind(data.length, layout.dc, layout.K);
  const m = fitSize(data.length, mixedCoefficientCount(kind, layout.dc, layout.K));
  const shape = { kind, uBest: imputedParts(layout, data[order[0]!]!.x).u, layout };
  const { rows, rhs } = rankWeighted(data, order, m, (x) => row(shape, x));
  return { ...shape, coefficients: solveWeighted(rows, rhs) };
}

/** f̂(x) at a mixed point (inactive coordinates imputed). */
export function predictMixed(model: MixedModel, x: readonly number[]): number {
  const z = row(model, x);
  let s = 0;
  for (let i = 0; i < z.length; i++) s += model.coefficients[i]! * z[i]!;
  return s;
}

/** The optimum of the quadratic part in u (d_c coordinates; none without continuous coordinates). */
export function mixedModelOptimum(model: MixedModel): number[] {
  const { dc } = model.layout;
  const pCont = coefficientCount(model.kind, dc);
  return modelOptimum({ kind: model.kind, coefficients: model.coefficients.slice(0, pCont), xBest: model.uBest }, dc);
}
