/**
 * Scalarisations that let a single-objective method search for a Pareto front, for MINIMISATION (a
 * caller negates objectives to maximise).
 *
 * Glossary: m = number of objectives; F = (f_1, …, f_m) a point; w = (w_1, …, w_m) weights on the
 * simplex (w_i ≥ 0, Σ w_i = 1); [lower_i, upper_i] the observed range of objective i, and
 * f̄_i = (f_i − lower_i)/(upper_i − lower_i) the normalised value (a range of 0 divides by 1);
 * ρ the augmentation weight; P a front and r a reference point (hypervolume.ts).
 *
 * - Augmented Chebyshev (ParEGO: J. Knowles, "ParEGO: a hybrid algorithm with on-line landscape
 *   approximation for expensive multiobjective optimization problems", IEEE TEC 10(1), 2006, eq. 2):
 *   s_w(F) = max_i w_i f̄_i + ρ Σ_i w_i f̄_i, ρ = 0.05, each objective normalised by its observed
 *   range. ParEGO draws w from a lattice on the simplex (s + 1 choose m − 1 vectors); here w is
 *   uniform on the whole simplex (w = E/ΣE with E_i ~ Exp(1), i.e. Dirichlet(1, …, 1)), as BoTorch's
 *   qParEGO samples it, so no weight is excluded and m needs no lattice size. Chebyshev and not a
 *   weighted sum: it reaches points on concave parts of a front (ALGORITHM.md §32.2).
 * - Hypervolume improvement: HVI(F; P, r) = HV(P ∪ {F}; r) − HV(P; r) ≥ 0. A point it gives 0 (one
 *   the front dominates) still needs a value that orders it, so `hviLoss` follows SMS-EGO
 *   (W. Ponweiser, T. Wagner, D. Biermann, M. Vincze, "Multiobjective optimization on a limited budget
 *   of evaluations using model-assisted S-metric selection", PPSN 2008): a loss −HVI(F) when F
 *   improves the front, otherwise the penalty Σ_{p ∈ P, p ⪯ F} (−1 + Π_i (1 + (f_i − p_i))) over the
 *   front points that weakly dominate F (ε = 0). A point no front point dominates but that lies
 *   outside r is charged −1 + Π_i (1 + max(0, f_i − r_i)), its distance past r measured the same
 *   way (our addition: SMS-EGO's r is always beyond every candidate). Callers normalise first (the
 *   penalty adds objectives' units).
 *
 * ALGORITHM.md §32.2 derives how the ProbNES methods are to use them. Every draw comes from the
 * caller's seeded generator (ARCHITECTURE.md rule 3); a scalarisation is plain JSON, so it can be kept
 * in an engine state for the generation that drew it.
 */
import { InvalidInputError, NonFiniteError } from '../errors.js';
import type { Rng } from '../random/index.js';
import { hypervolumeImprovement } from './hypervolume.js';
import { checkPoints, type Point } from './pareto.js';

/** Knowles (2006)'s augmentation weight. */
export const PAREGO_RHO = 0.05;

/** One augmented Chebyshev scalarisation: its weights, the normalisation, ρ. Plain JSON. */
export interface Scalarization {
  weights: number[];
  lower: number[];
  upper: number[];
  rho: number;
}

/** w uniform on the simplex of dimension m − 1: normalised Exp(1) draws (Dirichlet(1, …, 1)). */
export function simplexWeights(rng: Rng, m: number): number[] {
  if (!(Number.isInteger(m) && m >= 1)) throw new InvalidInputError(`the number of objectives must be an integer ≥ 1, got ${m}`);
  const e = Array.from({ length: m }, () => -Math.log(rng.uniformOpen()));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
}

/** The observed range of each objective over `points` (non-empty). */
export function observedRange(points: readonly Point[]): { lower: number[]; upper: number[] } {
  const m = checkPoints(points);
  if (m === 0) throw new InvalidInputError('the observed range needs at least one point');
  const lower = [...points[0]];
  const upper = [...points[0]];
  for (const p of points) {
    for (let i = 0; i < m; i++) {
      lower[i] = Math.min(lower[i], p[i]);
      upper[i] = Math.max(upper[i], p[i]);
    }
  }
  return { lower, upper };
}

/** A scalarisation with fresh weights from `rng`, normalised by the range of the observed points. */
export function drawScalarization(rng: Rng, observed: readonly Point[], rho = PAREGO_RHO): Scalarization {
  if (!(rho >= 0 && Number.isFinite(rho))) throw new InvalidInputError(`rho must be finite and ≥ 0, got ${rho}`);
  const { lower, upper } = observedRange(observed);
  return { weights: simplexWeights(rng, lower.length), lower, upper, rho };
}

/** f̄ = (f − lower)/(upper − lower), per objective; an objective without range is only shifted. */
export function normalise(s: Pick<Scalarization, 'lower' | 'upper'>, f: Point): number[] {
  if (f.length !== s.lower.length) throw new InvalidInputError(`a point has ${f.length} objectives, the scalarisation ${s.lower.length}`);
  return f.map((v, i) => {
    const range = s.upper[i] - s.lower[i];
    return (v - s.lower[i]) / (range > 0 ? range : 1);
  });
}

/** s_w(F) = max_i w_i f̄_i + ρ Σ_i w_i f̄_i (smaller is better). */
export function augmentedChebyshev(s: Scalarization, f: Point): number {
  checkPoints([f]);
  const fbar = normalise(s, f);
  let max = -Infinity;
  let sum = 0;
  for (let i = 0; i < fbar.length; i++) {
    const t = s.weights[i] * fbar[i];
    max = Math.max(max, t);
    sum += t;
  }
  return max + s.rho * sum;
}

/** The loss a minimiser of HVI uses: −HVI(F) when F improves P, SMS-EGO's penalty (≥ 0) otherwise. */
export function hviLoss(f: Point, front: readonly Point[], r: Point): number {
  const hvi = hypervolumeImprovement(f, front, r);
  if (hvi > 0) return -hvi;
  const excess = (p: Point): number => -1 + f.reduce((acc, v, i) => acc * (1 + Math.max(0, v - p[i])), 1);
  let penalty = 0;
  let dominated = false;
  for (const p of front) {
    if (p.every((v, i) => v <= f[i])) {
      dominated = true;
      penalty += excess(p);
    }
  }
  const loss = dominated ? penalty : excess(r);
  if (!Number.isFinite(loss)) throw new NonFiniteError(`the hypervolume-improvement loss is ${loss}: normalise the objectives first`);
  return loss;
}
