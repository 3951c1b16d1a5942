/**
 * Prob-SNES (ALGORITHM.md §4): the ProbNES loop of probnes-core.ts with the covariance update
 * diagonal Σ, Σ'_ii = Σ_ii·exp(η_Σ Σ_ii² G_ii) (reference form) or Σ_ii·exp(2η_Σ Σ_ii G_ii) (natural form) (paper appendix D, Prop. Probabilistic SNES).
 * Glossary: see probnes-core.ts (mean μ, cov Σ, G = ∂E_ν[−ỹ]/∂Σ).
 */
import { makeProbnesStrategy } from './probnes-core.js';

/** The form of the update is the bench option `snes_form` (probnes-params.ts): reference in the paper profile, natural in the default one. */
export const probSnes = makeProbnesStrategy('prob-snes', { learningRateCov: 1, optimumRadius: 2 });
