/**
 * Prob-CMAES (ALGORITHM.md §4): the ProbNES loop of probnes-core.ts with the covariance update
 * Σ' = Σ + 2η_Σ Σ G Σ (paper Prop. 2), step halvings then an eigenvalue floor.
 * Glossary: see probnes-core.ts (mean μ, cov Σ, G = ∂E_ν[−ỹ]/∂Σ).
 */
import { makeProbnesStrategy } from './probnes-core.js';

// optimum_radius stays at the shared default 2: 3 was measured (docs/BENCHMARKS.md, "prob-cmaes with
// optimum_radius 3") and not adopted, since one BBOB run (f23, d = 10) became many times slower with it.
export const probCmaes = makeProbnesStrategy('prob-cmaes', { learningRateCov: 0.5 });
