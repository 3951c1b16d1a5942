/**
 * Read-only views of a study's GP surrogate for people: its posterior on a set of points (a grid)
 * and each parameter's importance from the fitted length scales with the Laplace uncertainty.
 * Pure: the domain layer decides which GP (the one a method stored, or one fitted here to the
 * study's data for methods without a model) and which points; this module only computes.
 *
 * Glossary (shapes): d numeric dimension, n training points, m query points. u: the whitened
 * internal coordinates of the study's numeric parameters (prior N(0, I)); c: one choice index per
 * categorical parameter (K_j choices each). A point is x = [u, c]; the GP's input is
 * φ(x) = [u, one-hot(c_1), …] (gp/mixed-kernel.ts: the mixed methods' encoding and kernel,
 * ALGORITHM.md §27; φ = u without categorical parameters), D = d + Σ K_j columns, and
 * z = (φ − inputShift) ⊘ inputScale its own scaling (identity for ProbNES, the unit box on the
 * numeric columns for BO). f: the GP's latent function of z, its mean including the quadratic basis
 * mean `quad` when the method used one. The engine minimises y = yOffset + yScale·f. Parameter
 * scale: t = m0 + L0·u (L0 the prior's Cholesky factor), i.e. the parameter's own units, or ln of
 * them for log-scaled parameters.
 */
import { InvalidInputError } from '../errors.js';
import {
  type GpHyper,
  type GpModel,
  type QuadraticMean,
  boPriors,
  buildModel,
  evalQuadratic,
  fitGp,
  lowerInverse,
  predict,
  probnesPriors,
  toMat,
} from '../gp/index.js';
import { activeMask, impute, type Condition } from '../distributions/conditional.js';
import { blockOffsets, blockWeights, encodeMixed, overlapDoubleMean, overlapKernel } from '../gp/mixed-kernel.js';
import { fromRows, toRows } from '../linalg/index.js';
import { standardise } from '../strategies/probnes-data.js';
import { lengthscaleCovariance } from './laplace.js';

/**
 * The Laplace Hessian takes 2(D + 3) gradient evaluations of the MAP objective, each O(n³ + n²D):
 * beyond this many GP inputs (the most a numeric study has: 100 parameters; a one-hot block adds
 * one input per choice) the intervals are not computed (uncertainty null), which bounds the
 * importance view's cost by that of the largest numeric study.
 */
export const MAX_LAPLACE_INPUTS = 100;

export interface StoredViewGp {
  hyper: GpHyper;
  /** The GP's training inputs z (n×d). */
  X: number[][];
  /** Its training targets f (n), before any basis mean is subtracted. */
  targets: number[];
  quad: QuadraticMean | null;
}

export interface ViewModelSpec {
  /** Per column of φ (D). */
  inputShift: number[];
  inputScale: number[];
  /**
   * K_j of each categorical parameter (absent or empty: a numeric space). With categories, grid
   * points and data.U are internal points [u (d), c (m)], encoded as φ before scaling; a stored
   * GP's X is already in z.
   */
  categories?: number[];
  /**
   * Conditional coordinates (ALGORITHM.md §30): φ of every point, data and grid alike, has its
   * inactive coordinates imputed (0 before scaling, one-hot zeros), as the GP methods do.
   */
  conditions?: Condition[];
  yOffset: number;
  yScale: number;
  /** Which hyperpriors the GP was fitted with (they enter the Laplace curvature). */
  priors: 'probnes' | 'bo';
  /** The GP a method stored; null: fit one here to `data`. */
  stored: StoredViewGp | null;
  /** Internal coordinates and engine y of the study's completed points (used when `stored` is null). */
  data?: { U: number[][]; y: number[] } | null;
  /** With `data`: hyperparameters of an earlier fit to the same data, used as they are (no refit). */
  fittedHyper?: GpHyper | null;
}

export type ModelViewTask =
  | { view: 'grid'; model: ViewModelSpec; points: number[][] }
  | { view: 'importance'; model: ViewModelSpec; L0: number[][]; choicePriors?: number[][] };

/** `fitted`: the hyperparameters of the GP fitted for the view (null when the method's own was used). */
export type ModelViewResult =
  | { view: 'grid'; mean: number[]; std: number[]; fitted: GpHyper | null }
  | { view: 'importance'; importance: ImportanceResult; fitted: GpHyper | null };

export interface ParameterLengthscale {
  /** ℓ_t,i: the kernel's length scale along parameter i, in the parameter's scale t. */
  lengthscale: number;
  /** Standard deviation of log ℓ_t,i under the Laplace approximation; null when unavailable. */
  logSd: number | null;
  /** √(L0 L0ᵀ)_ii: the prior's standard deviation of t_i, the yardstick for relevance. */
  priorStd: number;
}

/**
 * A categorical parameter's relevance on the numeric parameters' scale. A numeric parameter of
 * relevance r = σ/ℓ (prior std over length scale) makes two independent draws from its prior
 * (others equal) correlate, in expectation under the kernel, by E[exp(−Δ²/2ℓ²)], Δ ~ N(0, 2σ²),
 * = (1 + 2r²)^(−1/2). A categorical parameter's expected correlation over two draws from its prior
 * p is ρ = Σ_a Σ_b p_a p_b κ(a, b) (the overlap kernel's double mean); its relevance is the r with
 * the same expected correlation: r = √((ρ⁻² − 1)/2). Both say how much of the GP's prior variance
 * varies along the parameter across its prior (E Var = s·(1 − ρ)), so they rank together.
 */
export interface ChoiceRelevance {
  relevance: number;
  /** Standard deviation of log r under the Laplace approximation (delta method); null when unavailable. */
  logSd: number | null;
  /** ρ: the kernel's expected correlation between two draws from the parameter's prior. */
  correlation: number;
}

export interface ImportanceResult {
  parameters: ParameterLengthscale[];
  /** One per categorical parameter, in their order (empty on a numeric space). */
  categorical: ChoiceRelevance[];
  uncertainty: 'joint' | 'conditional' | null;
  /** Training points of the GP. */
  n: number;
}

interface ViewGp {
  model: GpModel;
  quad: QuadraticMean | null;
  priors: 'probnes' | 'bo';
  yOffset: number;
  yScale: number;
  /** GP targets after the basis mean, as the constant-mean GP `model` saw them. */
  residual: number[];
  fitted?: GpHyper;
}

/** The GP to show: rebuilt at the stored hyperparameters, or a MAP fit to the data (ALGORITHM.md §2 priors). */
function viewGp(spec: ViewModelSpec): ViewGp {
  if (spec.stored) {
    const { hyper, X, targets, quad } = spec.stored;
    if (X.length === 0 || X.length !== targets.length) throw new InvalidInputError('the stored GP has no training points');
    const residual = quad ? targets.map((v, j) => v - evalQuadratic(quad, X[j])) : targets;
    const h = quad ? { ...hyper, constant: 0 } : hyper;
    return { model: buildModel(toMat(X), residual, h), quad, priors: spec.priors, yOffset: spec.yOffset, yScale: spec.yScale, residual };
  }
  const data = spec.data;
  if (!data || data.U.length < 2) throw new InvalidInputError('a model needs at least two completed evaluations');
  const Z = data.U.map((u) => toZ(spec, u));
  const { yTilde, yMean, yStd } = standardise(data.y);
  // ProbNES's priors in φ's dimension D, as the mixed ProbNES methods fit theirs (ALGORITHM.md §27).
  const D = Z[0].length;
  const model = spec.fittedHyper ? buildModel(toMat(Z), yTilde, spec.fittedHyper) : fitGp(Z, yTilde, { priors: probnesPriors(D) }).model;
  return { model, quad: null, priors: 'probnes', yOffset: yMean, yScale: yStd, residual: yTilde, fitted: model.hyper };
}

/** z of an internal point x = [u, c]: φ(x) (choice indices rounded, as the mixed methods do), scaled. */
function toZ(spec: ViewModelSpec, x: ArrayLike<number>): number[] {
  const K = spec.categories ?? [];
  const dc = x.length - K.length;
  const raw = K.length === 0 ? Array.from(x) : encodeMixed(Array.from(x, (v, j) => (j < dc ? v : Math.round(v))), dc, K);
  const phi = spec.conditions?.length ? impute(raw, activeMask(spec.conditions, x), dc, K, new Array<number>(dc).fill(0)) : raw;
  return phi.map((v, j) => (v - spec.inputShift[j]) / spec.inputScale[j]);
}

/** Posterior mean and latent std of y at `points` (internal coordinates), in engine y units. */
function gridView(spec: ViewModelSpec, points: number[][]): { mean: number[]; std: number[]; fitted: GpHyper | null } {
  const gp = viewGp(spec);
  const Z = points.map((u) => toZ(spec, u));
  const p = predict(gp.model, Z);
  const mean = Z.map((z, j) => gp.yOffset + gp.yScale * (p.mean[j] + (gp.quad ? evalQuadratic(gp.quad, z) : 0)));
  const std = Z.map((_, j) => Math.abs(gp.yScale) * Math.sqrt(p.variance[j]));
  return { mean, std, fitted: gp.fitted ?? null };
}

/**
 * Length scales in each numeric parameter's scale. The kernel's quadratic form in u is
 * Σ_j (Δu_j/ℓ_u,j)² with ℓ_u = ℓ_z ⊙ inputScale; in t = m0 + L0 u it is Δtᵀ P Δt with
 * P = L0⁻ᵀ Λ_u⁻¹ L0⁻¹, so along parameter i alone the length scale is ℓ_t,i = 1/√P_ii (= L0_ii·ℓ_u,i
 * for a diagonal prior). By the delta method, ∂ log ℓ_t,i/∂ log ℓ_u,j = w_ij = (L0⁻¹)_ji²/ℓ_u,j² / P_ii
 * (the w_i sum to 1), so Var(log ℓ_t,i) = w_iᵀ C w_i with C the Laplace covariance of log ℓ
 * (laplace.ts). The one-hot columns that follow the d numeric ones give each categorical
 * parameter's relevance (ChoiceRelevance), its variance by the delta method on the same C.
 */
function importanceView(spec: ViewModelSpec, L0rows: number[][], choicePriors: number[][]): ImportanceResult & { fitted: GpHyper | null } {
  const gp = viewGp(spec);
  const D = gp.model.X.cols;
  const K = spec.categories ?? [];
  const d = D - K.reduce((a, k) => a + k, 0);
  if (L0rows.length !== d) throw new InvalidInputError(`L0 must be ${d}×${d}`);
  if (choicePriors.length !== K.length || choicePriors.some((p, j) => p.length !== K[j])) throw new InvalidInputError('choicePriors must give one probability per choice of each categorical parameter');
  const Linv = toRows(lowerInverse(fromRows(L0rows)));
  const ellU = Array.from({ length: d }, (_, j) => gp.model.hyper.lengthscales[j] * spec.inputScale[j]);
  const priors = gp.priors === 'bo' ? boPriors() : probnesPriors(D);
  const X = Array.from({ length: gp.model.X.rows }, (_, i) => Array.from(gp.model.X.data.subarray(i * D, (i + 1) * D)));
  const C = D <= MAX_LAPLACE_INPUTS ? lengthscaleCovariance(X, gp.residual, gp.model.hyper, priors) : { cov: null, kind: null };
  const parameters = Array.from({ length: d }, (_, i) => {
    const terms = ellU.map((l, j) => Linv[j][i] ** 2 / l ** 2);
    const Pii = terms.reduce((s, v) => s + v, 0);
    const w = terms.map((v) => v / Pii);
    let logSd: number | null = null;
    if (C.cov) {
      let v = 0;
      for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) v += w[a] * C.cov[a][b] * w[b];
      logSd = v >= 0 && Number.isFinite(v) ? Math.sqrt(v) : null;
    }
    const priorStd = Math.sqrt(L0rows[i].reduce((s, v) => s + v * v, 0));
    return { lengthscale: 1 / Math.sqrt(Pii), logSd, priorStd };
  });
  // The one-hot columns are unscaled in z (inputScale 1 there), so their ℓ are the kernel's own.
  const weights = blockWeights(gp.model.hyper.lengthscales, d, K);
  const offsets = blockOffsets(d, K);
  const categorical = K.map((k, j) => choiceRelevance(weights[j]!, choicePriors[j]!, offsets[j]!, C.cov));
  return { parameters, categorical, uncertainty: C.kind, n: gp.model.X.rows, fitted: gp.fitted ?? null };
}

/**
 * r = √((ρ⁻² − 1)/2) with ρ = Σ_a Σ_b p_a p_b κ(a, b) (ChoiceRelevance). With w_a = 1/ℓ_a²,
 * ∂κ(a, b)/∂ log ℓ_a = w_a κ(a, b) for b ≠ a, so ∂ρ/∂ log ℓ_a = 2 p_a w_a Σ_{b≠a} p_b κ(a, b), and
 * d log r/dρ = −1/(ρ(1 − ρ²)); Var(log r) = gᵀ C_block g by the delta method.
 */
export function choiceRelevance(w: ArrayLike<number>, p: readonly number[], offset: number, cov: number[][] | null): ChoiceRelevance {
  const rho = Math.min(overlapDoubleMean(w, p), 1);
  const relevance = Math.sqrt(Math.max(1 / (rho * rho) - 1, 0) / 2);
  let logSd: number | null = null;
  if (cov && relevance > 0) {
    const dLogR = -1 / (rho * (1 - rho * rho));
    const g = p.map((pa, a) => {
      let s = 0;
      for (let b = 0; b < p.length; b++) if (b !== a) s += p[b] * overlapKernel(w, a, b);
      return dLogR * 2 * pa * w[a] * s;
    });
    let v = 0;
    for (let a = 0; a < g.length; a++) for (let b = 0; b < g.length; b++) v += g[a] * cov[offset + a][offset + b] * g[b];
    logSd = v >= 0 && Number.isFinite(v) ? Math.sqrt(v) : null;
  }
  return { relevance, logSd, correlation: rho };
}

export function runModelView(task: ModelViewTask): ModelViewResult {
  if (task.view === 'grid') return { view: 'grid', ...gridView(task.model, task.points) };
  const { fitted, ...importance } = importanceView(task.model, task.L0, task.choicePriors ?? []);
  return { view: 'importance', importance, fitted };
}
