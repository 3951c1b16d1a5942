/**
 * Prob-XNES (ALGORITHM.md §4): the ProbNES loop of probnes-core.ts with the covariance update
 * Σ' = A expm(2η_Σ Aᵀ G A) Aᵀ with A = chol(current Σ) (paper appendix D, Prop. Probabilistic xNES).
 * Glossary: see probnes-core.ts (mean μ, cov Σ, G = ∂E_ν[−ỹ]/∂Σ).
 */
import { makeProbnesStrategy } from './probnes-core.js';

export const probXnes = makeProbnesStrategy('prob-xnes', { learningRateCov: 0.5, optimumRadius: 2 });
