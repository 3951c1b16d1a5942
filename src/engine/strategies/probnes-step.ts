/**
 * The mean step of the default profile when the GP mean is quadratic (option `mean_step`;
 * docs/ALGORITHM.md §18). ALGORITHM.md §4's step μ' = μ + η_μ Σ g_μ is the natural gradient:
 * its length is set by Σ, which lags behind the curvature the quadratic mean has already measured
 * (at d = 5 the natural step was 3–20× shorter than the model's Newton step). Two longer steps,
 * both kept inside a trust region ‖L_Σ⁻¹(μ' − μ)‖ ≤ ρ (Mahalanobis under the current ν, where the
 * model has data):
 * - "line": along s = Σ g_μ, the step t·s maximising the model's quadratic along that line,
 *   t* = −(g_μᵀs)/(2 sᵀAs) when sᵀAs < 0 (longer or shorter than the natural step);
 * - "newton": δ = −½ A⁻¹ g_μ (the quadratic part's Hessian of E_ν is 2A) when A is negative
 *   definite, else the natural step;
 * - "cauchy": the trust-region Cauchy point (Nocedal & Wright 2006, §4.1): the line step when the
 *   model is concave along s, else the step along s to the region's boundary, t = ρ/‖L_Σ⁻¹s‖;
 * - "newton-cauchy": the Newton step when A is negative definite, else the Cauchy point.
 * Glossary: d dimension; mean μ (d), cov Σ (d×d); g_μ (d) the full expected gradient (basis part +
 * residual GP), A (d×d) the basis mean's quadratic coefficient (gp/basis.ts), maximised (z = −ỹ).
 */
import { type Bounds, clampToBounds } from './bounds.js';
import { NonFiniteError } from '../errors.js';
import { cholesky, cholSolve, fromRows, matMul, matVec, solveLower, symEig, transpose, tryCholesky } from '../linalg/index.js';

export type MeanStep = 'natural' | 'line' | 'newton' | 'cauchy' | 'newton-cauchy';

/** ‖L_Σ⁻¹δ‖: the Mahalanobis length of δ under Σ. */
function mahalanobis(delta: ArrayLike<number>, cov: number[][]): number {
  const z = solveLower(cholesky(fromRows(cov)).L, Float64Array.from(delta));
  let n2 = 0;
  for (let i = 0; i < z.length; i++) n2 += z[i] * z[i];
  return Math.sqrt(n2);
}

/** Scales δ down so that ‖L_Σ⁻¹δ‖ ≤ ρ. */
function clipToRegion(delta: Float64Array, cov: number[][], radius: number): Float64Array {
  const norm = mahalanobis(delta, cov);
  if (norm <= radius) return delta;
  const f = radius / norm;
  return delta.map((v) => v * f);
}

export function meanStep(
  kind: MeanStep,
  mean: number[],
  cov: number[][],
  gMean: ArrayLike<number>,
  A: number[][] | null,
  etaMean: number,
  radius: number,
): number[] {
  const d = mean.length;
  const s = matVec(fromRows(cov), gMean); // natural step direction Σ g_μ
  let delta: Float64Array = Float64Array.from(s, (v) => etaMean * v);
  const concave = A !== null && tryCholesky(fromRows(A.map((row) => row.map((v) => -v))));
  if (A && (kind === 'line' || kind === 'cauchy' || (kind === 'newton-cauchy' && !concave))) {
    let gs = 0, sAs = 0;
    for (let i = 0; i < d; i++) {
      gs += gMean[i] * s[i];
      let t = 0;
      for (let j = 0; j < d; j++) t += A[i][j] * s[j];
      sAs += s[i] * t;
    }
    if (sAs < 0 && gs > 0) {
      const t = -gs / (2 * sAs);
      delta = Float64Array.from(s, (v) => t * v);
    } else if (kind !== 'line' && gs > 0) {
      // Not concave along s: the model rises up to the region's boundary, where the step ends.
      const t = radius / mahalanobis(s, cov);
      delta = Float64Array.from(s, (v) => t * v);
    }
  } else if (A && concave && (kind === 'newton' || kind === 'newton-cauchy')) {
    const x = cholSolve(cholesky(fromRows(A.map((row) => row.map((v) => -v)))).L, gMean); // (−A)⁻¹ g
    delta = Float64Array.from(x, (v) => 0.5 * v);
  }
  if (kind !== 'natural' && A) delta = clipToRegion(delta, cov, radius);
  const out = mean.map((m, i) => m + delta[i]);
  if (!out.every(Number.isFinite)) throw new NonFiniteError('ProbNES mean step produced a non-finite mean');
  return out;
}

/**
 * The covariance step's size limit once the mean is quadratic (docs/ALGORITHM.md §19): G
 * scaled by min(1, κ / ρ(2η_Σ L_Σᵀ G L_Σ)), ρ the spectral radius, so that no direction of Σ changes
 * by more than a factor ≈ e^κ in one generation. G ≈ A is then the fitted curvature, which is not
 * bounded: a quadratic fitted on points clustered far inside ν has |A| ≫ Σ⁻¹, and the XNES/SNES
 * exponential forms overflowed on it.
 */
export function limitCovGradient(cov: number[][], gCov: number[][], etaCov: number, kappa: number): number[][] {
  const L = cholesky(fromRows(cov)).L;
  const M = matMul(matMul(transpose(L), fromRows(gCov)), L);
  const ev = symEig(M).values;
  let rho = 0;
  for (let i = 0; i < ev.length; i++) rho = Math.max(rho, Math.abs(2 * etaCov * ev[i]));
  if (!(rho > kappa)) return gCov;
  const f = kappa / rho;
  return gCov.map((row) => row.map((v) => v * f));
}

/** A mean step from (μ, Σ, g_μ, A): one of meanStep's, or the natural step. */
export type Stepper = (mean: number[], cov: number[][], gMean: number[], A: number[][] | null) => number[];

/**
 * The mean step with μ kept inside the bounds (options `mean_in_bounds`, `mean_step_free`;
 * docs/ALGORITHM.md §22). With `free`, a coordinate of μ that sits on a bound which the
 * natural direction s = Σg_μ pushes against (μ_i ≥ u_i and s_i > 0, or μ_i ≤ l_i and s_i < 0) is held
 * there, and the step is taken in the other coordinates only — the projected-gradient method's
 * active set (Bertsekas 1982): on the restricted problem (μ_F, Σ_FF, g_F, A_FF). Without it, the step
 * of all coordinates is taken and then projected; its length is spent on the blocked coordinates and
 * the free ones crawl (BBOB f5: the steep coordinate on its bound, the shallow one moving 0.1 per
 * generation). Either way the result is projected onto the bounds.
 */
export function stepInBounds(step: Stepper, mean: number[], cov: number[][], gMean: number[], A: number[][] | null, bounds: Bounds, free: boolean): number[] {
  const d = mean.length;
  const s = matVec(fromRows(cov), gMean);
  const held = (i: number) =>
    free && ((bounds.upper[i] !== null && mean[i] >= bounds.upper[i]! && s[i] > 0) || (bounds.lower[i] !== null && mean[i] <= bounds.lower[i]! && s[i] < 0));
  const F = Array.from({ length: d }, (_, i) => i).filter((i) => !held(i));
  if (F.length === d) return clampToBounds(step(mean, cov, gMean, A), bounds);
  if (F.length === 0) return mean.slice();
  const sub = step(F.map((i) => mean[i]), F.map((i) => F.map((j) => cov[i][j])), F.map((i) => gMean[i]), A ? F.map((i) => F.map((j) => A[i][j])) : null);
  const out = mean.slice();
  F.forEach((i, k) => (out[i] = sub[k]));
  return clampToBounds(out, bounds);
}
