/**
 * Prob-CMAES (ALGORITHM.md §4): the ProbNES loop of probnes-core.ts with the covariance update
 * Σ' = Σ + 2η_Σ Σ G Σ (paper Prop. 2), step halvings then an eigenvalue floor.
 * Glossary: see probnes-core.ts (mean μ, cov Σ, G = ∂E_ν[−ỹ]/∂Σ).
 */
import { makeProbnesStrategy } from './probnes-core.js';

export const probCmaes = makeProbnesStrategy('prob-cmaes', {
  learningRateCov: 0.5,
  // ALGORITHM.md §24: the model optimum's trust radius in the default profile (BBOB ablation of
  // optimum_radius 2/3/4/8 in docs/BENCHMARKS.md); prob-xnes and prob-snes keep 2, the paper profile never injects.
  optimumRadius: 3,
});
