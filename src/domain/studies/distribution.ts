/**
 * The search distribution N(mean, cov) of an engine state, which lives in internal whitened
 * coordinates u = L0⁻¹(T(x) − m0) (transforms.ts), read back in the parameters' own terms:
 *
 *   transformed mean   t̄ = m0 + L0 μ                 (T(x) scale: x, or ln x for log parameters)
 *   transformed cov    C = L0 Σ L0ᵀ                   (the same scale, parameter order)
 *   user-unit mean     T⁻¹(t̄)                         (exp for log parameters; not rounded or projected)
 *
 * The user-unit mean is the image of the transformed mean, not the mean of the distribution
 * pushed through T⁻¹ (for a log parameter that would be exp(t̄ + C_ii/2)): it is the centre of the
 * search, the point the method is converging to. std and covariance stay in the transformed scale,
 * where the distribution is Gaussian; in user units a log parameter's spread is multiplicative.
 *
 * Categorical parameters: the state's `categorical` holds each one's probabilities over its choices
 * (the prior when a method keeps none). The "mean" of a categorical parameter is its most probable
 * choice; mean, meanTransformed, covariance and std otherwise cover the numeric parameters only.
 */
import type { JsonValue } from '../../storage/index.js';
import { modeOf } from '../../engine/index.js';
import type { ParamValue } from './study-request.js';
import { categoryPriors, toUserRaw, type SearchSpace } from './transforms.js';

export interface UserDistribution {
  /** User units, keyed by parameter name (a categorical parameter's most probable choice). */
  mean: Record<string, ParamValue>;
  meanTransformed: number[];
  covariance: number[][];
  std: number[];
  /** Per categorical parameter, the probabilities of its choices (in the order of `choices`). */
  probabilities: Record<string, number[]>;
}

export interface InternalDistribution {
  /** Over the numeric coordinates (d). */
  mean: number[];
  cov: number[][];
  /** Per categorical parameter, its choices' probabilities. */
  categorical: number[][];
}

/** The search distribution of a stored engine state; throws if the snapshot lacks it. */
export function internalDistribution(state: JsonValue, space: SearchSpace): InternalDistribution {
  const d = space.numeric.length;
  const s = state as { mean?: unknown; cov?: unknown; categorical?: unknown } | null;
  const isVec = (v: unknown, n: number): v is number[] => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number');
  if (!s || !isVec(s.mean, d) || !Array.isArray(s.cov) || s.cov.length !== d || !s.cov.every((r) => isVec(r, d))) {
    throw new Error(`engine state has no ${d}-dimensional mean and covariance`);
  }
  const q = s.categorical;
  const okQ = Array.isArray(q) && q.length === space.categorical.length && space.categorical.every((p, j) => isVec(q[j], p.choices.length));
  return { mean: s.mean, cov: s.cov as number[][], categorical: okQ ? (q as number[][]) : categoryPriors(space) };
}

/** Before the engine has a state, the search distribution is the prior: N(0, I) internally, the choices' priors. */
export function priorDistribution(space: SearchSpace): InternalDistribution {
  const d = space.numeric.length;
  return {
    mean: new Array<number>(d).fill(0),
    cov: Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0))),
    categorical: categoryPriors(space),
  };
}

/** The internal point at the centre of a distribution: the mean, then each categorical parameter's most probable choice. */
export function centrePoint(dist: InternalDistribution): number[] {
  return [...dist.mean, ...dist.categorical.map(modeOf)];
}

/** The distribution in the parameters' scale and in user units (see header). */
export function userDistribution(space: SearchSpace, dist: InternalDistribution): UserDistribution {
  const { mean, cov } = dist;
  const d = space.numeric.length;
  const L = (i: number, j: number) => space.L0.data[i * d + j]!;
  const meanTransformed = space.m0.map((m, i) => {
    let s = m;
    for (let k = 0; k <= i; k++) s += L(i, k) * mean[k]!;
    return s;
  });
  // L0 Σ (d×d), then (L0 Σ) L0ᵀ; L0 is lower triangular.
  const LS = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => {
    let s = 0;
    for (let k = 0; k <= i; k++) s += L(i, k) * cov[k]![j]!;
    return s;
  }));
  const covariance = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => {
    let s = 0;
    for (let k = 0; k <= j; k++) s += LS[i]![k]! * L(j, k);
    return s;
  }));
  // Exact symmetry for clients that check it (the products above round differently per triangle).
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) covariance[i]![j] = covariance[j]![i] = (covariance[i]![j]! + covariance[j]![i]!) / 2;
  const user = toUserRaw(space, centrePoint(dist));
  const named: Record<string, ParamValue> = {};
  space.parameters.forEach((p, i) => (named[p.name] = user[i]!));
  const probabilities: Record<string, number[]> = {};
  space.categorical.forEach((p, j) => (probabilities[p.name] = [...dist.categorical[j]!]));
  return { mean: named, meanTransformed, covariance, std: covariance.map((row, i) => Math.sqrt(Math.max(row[i]!, 0))), probabilities };
}
