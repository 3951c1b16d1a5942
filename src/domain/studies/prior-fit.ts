/**
 * Priors fitted to data: to points the user believes plausible (`from_points`), or to the best
 * trials of an earlier study (`from_study`, a warm start). Both work in the transformed scale of
 * study-spec.ts (ln(value) for log parameters) and return a joint Gaussian {mean, covariance}
 * that then goes through the same checks as a typed-in joint prior.
 *
 * Notation: n points x_k ∈ ℝ^d (transformed scale) with normalised weights w_k (Σ w_k = 1);
 * s ∈ ℝ^d a per-parameter scale (the transformed width of the bounds, see `scaleOf`), and
 * D = diag(s) so that z_k = D⁻¹ x_k is dimensionless.
 */

/** Weighted mean m = Σ w_k x_k. */
function weightedMean(x: readonly number[][], w: readonly number[]): number[] {
  const d = x[0]!.length;
  const m = new Array<number>(d).fill(0);
  x.forEach((xk, k) => xk.forEach((v, j) => (m[j]! += w[k]! * v)));
  return m;
}

/** Σ w_k c_k c_kᵀ for rows c_k. */
function weightedScatter(c: readonly number[][], w: readonly number[]): number[][] {
  const d = c[0]!.length;
  const S = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  c.forEach((ck, k) => {
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) S[i]![j]! += w[k]! * ck[i]! * ck[j]!;
  });
  return S;
}

export interface ShrunkFit {
  mean: number[];
  covariance: number[][];
  /** The shrinkage intensity ρ ∈ [0, 1] (1: the isotropic target alone). */
  shrinkage: number;
}

/**
 * Mean and shrunk covariance by the Oracle Approximating Shrinkage estimator (Chen, Wiesel, Eldar,
 * Hero, "Shrinkage algorithms for MMSE covariance estimation", IEEE Trans. Signal Process. 58(10),
 * 2010, eq. (23)), the small-sample refinement of Ledoit–Wolf toward the same target. Weighted, in the
 * scaled coordinates z = D⁻¹x so that parameters of different units are comparable:
 *
 *   S = Σ w_k (z_k − z̄)(z_k − z̄)ᵀ,   μ = tr(S)/d,   n = 1/Σ w_k²  (the effective sample size)
 *   ρ = min(1, ((1 − 2/d)·tr(S²) + tr(S)²) / ((n + 1 − 2/d)·(tr(S²) − tr(S)²/d)))
 *   Ŝ = ρ μI + (1 − ρ) S
 *
 * Ledoit–Wolf's own intensity is 0 for two points (both centred outer products equal S, so its
 * estimate of their dispersion vanishes) and would return the singular S; OAS was built for n ≪ d and
 * gives ρ = 5/7 for two points in ten dimensions. Ŝ is positive definite whenever μ > 0 (the points
 * are not all equal) and ρ > 0. Returned in x units: D Ŝ D.
 */
export function shrunkFit(x: readonly number[][], weights: readonly number[], scale: readonly number[]): ShrunkFit | null {
  const d = scale.length;
  const total = weights.reduce((a, b) => a + b, 0);
  const w = weights.map((v) => v / total);
  const z = x.map((xk) => xk.map((v, j) => v / scale[j]!));
  const zbar = weightedMean(z, w);
  const S = weightedScatter(z.map((zk) => zk.map((v, j) => v - zbar[j]!)), w);
  let trS = 0;
  let trS2 = 0;
  for (let i = 0; i < d; i++) {
    trS += S[i]![i]!;
    for (let j = 0; j < d; j++) trS2 += S[i]![j]! ** 2;
  }
  const mu = trS / d;
  if (!(mu > 0) || !Number.isFinite(mu)) return null;
  const n = 1 / w.reduce((a, v) => a + v * v, 0);
  const den = (n + 1 - 2 / d) * (trS2 - (trS * trS) / d);
  // den ≤ 0 only when S is already a multiple of I (to rounding): the target is S itself then.
  const rho = den > 0 ? Math.min(1, ((1 - 2 / d) * trS2 + trS * trS) / den) : 1;
  const covariance = S.map((row, i) => row.map((v, j) => ((i === j ? rho * mu : 0) + (1 - rho) * v) * scale[i]! * scale[j]!));
  return { mean: zbar.map((v, j) => v * scale[j]!), covariance, shrinkage: rho };
}

/**
 * The WS-CMA-ES promising distribution (Nomura, Watanabe, Akimoto, Ozaki, Onishi, "Warm Starting
 * CMA-ES for Hyperparameter Optimization", AAAI 2021, §4): the best ⌈γ·N⌉ source solutions each
 * spread as N(x_k, α²I) in the unit-scaled space, and the single Gaussian closest in KL to that
 * mixture:
 *
 *   m* = (1/k) Σ z_k,    Σ* = α² I + (1/k) Σ (z_k − m*)(z_k − m*)ᵀ
 *
 * with z = D⁻¹x (the paper works in the search space scaled to [0, 1]^d, which D does here with
 * the transformed bounds' widths). α > 0 keeps Σ* positive definite for any k ≥ 1.
 */
export function warmStartFit(top: readonly number[][], scale: readonly number[], alpha: number): { mean: number[]; covariance: number[][] } {
  const k = top.length;
  const w = new Array<number>(k).fill(1 / k);
  const z = top.map((xk) => xk.map((v, j) => v / scale[j]!));
  const m = weightedMean(z, w);
  const S = weightedScatter(z.map((zk) => zk.map((v, j) => v - m[j]!)), w);
  return {
    mean: m.map((v, j) => v * scale[j]!),
    covariance: S.map((row, i) => row.map((v, j) => (v + (i === j ? alpha ** 2 : 0)) * scale[i]! * scale[j]!)),
  };
}
