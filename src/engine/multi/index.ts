/**
 * Several objectives and constraints, for minimisation (a caller negates objectives to maximise):
 * Pareto dominance, sorting and constraint-domination (pareto.ts), the exact hypervolume and its
 * derived reference point (hypervolume.ts), scalarisations for single-objective methods
 * (scalarize.ts). ALGORITHM.md §32 says how the ProbNES methods use them (the probability of
 * feasibility that filters their batch is strategies/feasibility.ts, beside the pool it filters).
 */
export {
  checkPoints,
  constrainedDominates,
  constrainedNonDominatedSort,
  crowdingDistance,
  dominates,
  feasibleNonDominated,
  isFeasible,
  nonDominated,
  nonDominatedSort,
  sortByDominance,
  totalViolation,
  type DominanceTest,
  type Point as ObjectivePoint,
} from './pareto.js';
export { deriveReferencePoint, hypervolume, hypervolume2d, hypervolumeContributions, hypervolumeImprovement, hypervolumeWfg } from './hypervolume.js';
export { augmentedChebyshev, drawScalarization, hviLoss, normalise as normaliseObjectives, observedRange, PAREGO_RHO, simplexWeights, type Scalarization } from './scalarize.js';
