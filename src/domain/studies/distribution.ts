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
 */
import type { JsonValue } from '../../storage/index.js';
import { toUserRaw, type SearchSpace } from './transforms.js';

export interface UserDistribution {
  /** User units, keyed by parameter name. */
  mean: Record<string, number>;
  meanTransformed: number[];
  covariance: number[][];
  std: number[];
}

/** mean (d) and cov (d×d) of a stored engine state; throws if the snapshot lacks them. */
export function internalDistribution(state: JsonValue, d: number): { mean: number[]; cov: number[][] } {
  const s = state as { mean?: unknown; cov?: unknown } | null;
  const isVec = (v: unknown, n: number): v is number[] => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number');
  if (!s || !isVec(s.mean, d) || !Array.isArray(s.cov) || s.cov.length !== d || !s.cov.every((r) => isVec(r, d))) {
    throw new Error(`engine state has no ${d}-dimensional mean and covariance`);
  }
  return { mean: s.mean, cov: s.cov as number[][] };
}

/** The distribution in the parameters' scale and in user units (see header). */
export function userDistribution(space: SearchSpace, mean: readonly number[], cov: readonly (readonly number[])[]): UserDistribution {
  const d = space.parameters.length;
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
  const user = toUserRaw(space, mean);
  const named: Record<string, number> = {};
  space.parameters.forEach((p, i) => (named[p.name] = user[i]!));
  return { mean: named, meanTransformed, covariance, std: covariance.map((row, i) => Math.sqrt(Math.max(row[i]!, 0))) };
}
