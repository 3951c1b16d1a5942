/**
 * The natural-gradient updates of the three ProbNES strategies (ALGORITHM.md §4; paper Prop. 2
 * and appendix D, Props. "Probabilistic xNES" and "Probabilistic SNES").
 *
 * Glossary (shapes): d = dimension; mean μ (d); cov Σ (d×d, number[][] as stored in state);
 * gMean g_μ (d) = ∂E[g]/∂μ; gCov G (d×d, symmetric) = ∂E[g]/∂Σ with all d² entries independent
 * (ALGORITHM.md §3); etaMean η_μ, etaCov η_Σ. The gradient is of the integral of the quantity being
 * MAXIMISED (the strategies feed −ỹ, see probnes-core.ts), so every update here is an ascent step.
 *
 * The Fisher inverse for (μ, Σ) is diag(Σ, 2Σ⊗Σ), so the natural gradient is (Σ g_μ, 2 Σ G Σ).
 */
import { NonFiniteError } from '../errors.js';
import {
  type Mat,
  add,
  cholesky,
  floorEigenvalues,
  fromRows,
  isFiniteMat,
  matMul,
  matVec,
  symExpm,
  symmetrize,
  toRows,
  transpose,
  tryCholesky,
} from '../linalg/index.js';

export type CovForm = 'cmaes' | 'xnes' | 'snes-reference' | 'snes-natural';

/** μ' = μ + η_μ Σ g_μ (the same mean step for all three strategies, ALGORITHM.md §4). */
export function updateMean(mean: number[], cov: number[][], gMean: ArrayLike<number>, etaMean: number): number[] {
  const step = matVec(fromRows(cov), gMean);
  const out = mean.map((m, i) => m + etaMean * step[i]);
  if (!out.every(Number.isFinite)) throw new NonFiniteError('ProbNES mean update produced a non-finite mean');
  return out;
}

/** Σ G Σ, symmetrised (G is symmetric, so the product is too up to rounding). */
function sandwich(S: Mat, G: Mat): Mat {
  return symmetrize(matMul(matMul(S, G), S));
}

/**
 * Prob-CMAES: Σ' = Σ + 2η_Σ Σ G Σ (default η_Σ = ½: the reference applies half the exact natural
 * step, and the paper's figures come from it). When Σ' is not positive definite (no successful
 * Cholesky), halve the step up to 5 times; only then floor the eigenvalues of the last candidate
 * (λ_min ≥ 1e-12 λ_max).
 */
export function updateCovCmaes(cov: number[][], gCov: number[][], etaCov: number): number[][] {
  const S = fromRows(cov);
  const step = sandwich(S, fromRows(gCov));
  if (!isFiniteMat(step)) throw new NonFiniteError('Prob-CMAES covariance step is not finite');
  let factor = 2 * etaCov;
  let candidate = S;
  for (let halvings = 0; halvings <= 5; halvings++, factor /= 2) {
    candidate = symmetrize(add(S, step, factor));
    if (!isFiniteMat(candidate)) throw new NonFiniteError('Prob-CMAES covariance update overflowed');
    if (tryCholesky(candidate)) return toRows(candidate);
  }
  return toRows(symmetrize(floorEigenvalues(candidate, 1e-12)));
}

/**
 * Prob-XNES: with A = chol(Σ) of the CURRENT Σ (the reference reuses a stale factor from the
 * previous generation; ALGORITHM.md §4 says not to copy that), Σ' = A expm(2η_Σ Aᵀ G A) Aᵀ.
 * To first order this equals the CMA step Σ + 2η_Σ Σ G Σ, and it is positive definite by
 * construction. Overflow in expm is a typed NonFiniteError (linalg/eigen.ts).
 */
export function updateCovXnes(cov: number[][], gCov: number[][], etaCov: number): number[][] {
  const S = symmetrize(fromRows(cov));
  const A = cholesky(S).L;
  const At = transpose(A);
  const M = matMul(matMul(At, fromRows(gCov)), A);
  for (let i = 0; i < M.data.length; i++) M.data[i] *= 2 * etaCov;
  const E = symExpm(symmetrize(M));
  const out = symmetrize(matMul(matMul(A, E), At));
  if (!isFiniteMat(out)) throw new NonFiniteError('Prob-XNES covariance update overflowed');
  if (!tryCholesky(out)) return toRows(symmetrize(floorEigenvalues(out, 1e-12)));
  return toRows(out);
}

/**
 * Prob-SNES (diagonal Σ; off-diagonal entries of G are ignored):
 * - reference form Σ'_ii = Σ_ii · exp(η_Σ · Σ_ii² · G_ii) (Σ_ii² is σ⁴; reproduces the paper),
 * - natural form  Σ'_ii = Σ_ii · exp(2η_Σ · Σ_ii · G_ii) (the exact natural gradient of the
 *   variance, Fisher 1/(2σ⁴), applied in log space).
 * Overflow is a NonFiniteError; an underflow to 0 is floored at 1e-12 × the largest variance.
 */
export function updateCovSnes(cov: number[][], gCov: number[][], etaCov: number, form: 'reference' | 'natural'): number[][] {
  const d = cov.length;
  const v = cov.map((row, i) => row[i]);
  const next = v.map((vi, i) => {
    const g = gCov[i][i];
    const expo = form === 'reference' ? etaCov * vi * vi * g : 2 * etaCov * vi * g;
    return vi * Math.exp(expo);
  });
  if (!next.every((x) => Number.isFinite(x))) throw new NonFiniteError('Prob-SNES variance update overflowed');
  const floor = 1e-12 * Math.max(...next, 0);
  return Array.from({ length: d }, (_, i) =>
    Array.from({ length: d }, (_, j) => (i === j ? Math.max(next[i], floor > 0 ? floor : 1e-300) : 0)),
  );
}

/** Dispatch on the strategy's covariance form. */
export function updateCov(form: CovForm, cov: number[][], gCov: number[][], etaCov: number): number[][] {
  switch (form) {
    case 'cmaes':
      return updateCovCmaes(cov, gCov, etaCov);
    case 'xnes':
      return updateCovXnes(cov, gCov, etaCov);
    case 'snes-reference':
      return updateCovSnes(cov, gCov, etaCov, 'reference');
    case 'snes-natural':
      return updateCovSnes(cov, gCov, etaCov, 'natural');
  }
}
