/**
 * Gaussian expectation of a quadratic mean function and its gradient in (μ, Σ): the basis part of
 * the GP with explicit basis functions (gp/basis.ts, gp/reml.ts; docs/ALGORITHM.md §15).
 *
 * Glossary: d dimension; ν = N(μ, Σ); m(u) = a0 + bᵀ(u − c) + (u − c)ᵀ A (u − c) with A symmetric;
 * δ = μ − c. Under u ~ ν, u − c = δ + e with e ~ N(0, Σ), so
 *   E_ν[m] = a0 + bᵀδ + δᵀAδ + tr(AΣ)
 *   ∂E/∂μ  = b + 2Aδ
 *   ∂E/∂Σ  = A          (G_ij = ∂E/∂Σ_ij with all d² entries independent, as in bq.ts)
 * The full posterior mean's integral and gradient are these plus the residual GP's (bq.ts): the
 * integral is linear in the integrand.
 */
import { InvalidInputError } from '../errors.js';
import type { QuadraticMean } from '../gp/basis.js';
import { type Mat, zeros } from '../linalg/index.js';

export interface QuadraticMoments {
  integral: number;
  gradMean: Float64Array;
  /** d×d, symmetric. */
  gradCov: Mat;
}

export function quadraticMoments(q: QuadraticMean, mean: ArrayLike<number>, cov: ArrayLike<ArrayLike<number>>): QuadraticMoments {
  const d = q.b.length;
  if (mean.length !== d || cov.length !== d) throw new InvalidInputError(`quadraticMoments: dimension ${mean.length}, expected ${d}`);
  const delta = new Float64Array(d);
  for (let i = 0; i < d; i++) delta[i] = mean[i] - q.centre[i];
  let integral = q.a0;
  const gradMean = new Float64Array(d);
  const gradCov = zeros(d, d);
  for (let i = 0; i < d; i++) {
    let Ad = 0;
    for (let j = 0; j < d; j++) {
      Ad += q.A[i][j] * delta[j];
      integral += q.A[i][j] * cov[j][i];
      gradCov.data[i * d + j] = q.A[i][j];
    }
    integral += q.b[i] * delta[i] + delta[i] * Ad;
    gradMean[i] = q.b[i] + 2 * Ad;
  }
  return { integral, gradMean, gradCov };
}
