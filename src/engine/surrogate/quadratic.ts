/**
 * The global linear-quadratic surrogate of lq-CMA-ES (N. Hansen, "A Global Surrogate Assisted
 * CMA-ES", GECCO 2019): f̂(x) = c + bᵀx + xᵀHx, fitted by rank-weighted least squares with the
 * Moore–Penrose pseudoinverse, as linear, diagonal-quadratic or full quadratic model depending on
 * how many data there are. The constants below are the paper's and its reference implementation's
 * (pycma, `cma.fitness_models`, the author's code; values read there, code written anew).
 *
 * Glossary: n = dimension; p = number of model coefficients (n + 1 linear, 2n + 1 diagonal,
 * n(n + 3)/2 + 1 full); the data are (x, y) pairs, y the true value to minimise; "rank" orders the
 * data by y, best first.
 */
import { InvalidInputError } from '../errors.js';
import { minNormLeastSquares } from '../linalg/jacobi-svd.js';
import { leastSquaresQr } from '../linalg/least-squares.js';

export type ModelKind = 'linear' | 'diagonal' | 'full';

/** Only the best `TRUNCATION` share of the data enter the fit: the worst quarter is ignored. */
export const TRUNCATION = 0.75;
/** A model kind is used once TRUNCATION × (number of data) ≥ MIN_RELATIVE_SIZE × its p. */
export const MIN_RELATIVE_SIZE = 1.1;
/** The training set keeps at most max(λ, MAX_RELATIVE_SIZE × p_full) of the most recent data. */
export const MAX_RELATIVE_SIZE = 2;
/** Regression weights fall linearly with rank from MAX_WEIGHT (best) to 1 (worst used). */
export const MAX_WEIGHT = 20;

/** p, the number of coefficients of a model kind in dimension n. */
export function coefficientCount(kind: ModelKind, n: number): number {
  if (kind === 'linear') return n + 1;
  if (kind === 'diagonal') return 2 * n + 1;
  return (n * (n + 3)) / 2 + 1;
}

/**
 * The most complex kind the data allow: TRUNCATION · size ≥ MIN_RELATIVE_SIZE · p (linear always);
 * `extra` coefficients beside the quadratic's count in p (mixed-quadratic.ts's indicators).
 */
export function modelKind(size: number, n: number, extra = 0): ModelKind {
  for (const kind of ['full', 'diagonal'] as const) if (TRUNCATION * size >= MIN_RELATIVE_SIZE * (coefficientCount(kind, n) + extra)) return kind;
  return 'linear';
}

/**
 * The training-set size limit: max(λ, 2 p_full), and never below the size that the full model
 * needs (p_full · 1.1 / 0.75), so pruning never makes the model fall back to a simpler kind;
 * `extra` coefficients beside the quadratic's count in p_full.
 */
export function maxModelSize(n: number, lambda: number, extra = 0): number {
  const pFull = coefficientCount('full', n) + extra;
  return Math.max(lambda, Math.ceil(MAX_RELATIVE_SIZE * pFull), Math.ceil((MIN_RELATIVE_SIZE * pFull) / TRUNCATION));
}

/** How many of the best data enter the fit: max(p + 2, ⌊0.75 (size + 1)⌋), at most all of them. */
export function fitSize(size: number, p: number): number {
  return Math.min(size, Math.max(p + 2, Math.floor(TRUNCATION * (size + 1))));
}

/** The feature vector z(x) = (1, x, x², (x_i x_j)_{i<j}) of a model kind, so that f̂(x) = βᵀz(x). */
export function features(kind: ModelKind, x: readonly number[]): number[] {
  const z = [1, ...x];
  if (kind === 'linear') return z;
  for (const v of x) z.push(v * v);
  if (kind === 'full') for (let i = 0; i < x.length; i++) for (let j = i + 1; j < x.length; j++) z.push(x[i] * x[j]);
  return z;
}

export interface Observed {
  x: number[];
  y: number;
}

/**
 * A fitted model as plain data. The features are taken of x − xBest: the same function class as
 * features of x (a quadratic in x − c is a quadratic in x), but far better conditioned once the
 * data lie in a small region far from the origin, as they do when CMA-ES converges.
 */
export interface QuadraticModel {
  kind: ModelKind;
  /** β, in the order of `features(kind, x − xBest)`. */
  coefficients: number[];
  /** The best data point (the centre of the features; the linear model's optimum is placed relative to it). */
  xBest: number[];
}

const minus = (x: readonly number[], c: readonly number[]): number[] => x.map((v, i) => v - c[i]);

/**
 * Fits the model to `data` (any order): the kind the data allow, the best fitSize(·) points by y
 * weighted linearly from MAX_WEIGHT down to 1 by rank, β = (W Z)⁺ W y with the pseudoinverse
 * (minimum-norm least squares: well defined with fewer data than coefficients). Ties in y keep the
 * data order. Needs at least one point.
 *
 * The solve: Householder QR (linalg/least-squares.ts) where A = W Z has full column rank well
 * inside the SVD's truncation level, which gives the pseudoinverse's answer up to rounding at
 * 20–50× less cost at n = 10; everywhere else (fewer rows than coefficients, near rank deficiency)
 * the pseudoinverse itself, by the one-sided Jacobi SVD (linalg/jacobi-svd.ts), which always
 * terminates.
 */
export function fitModel(data: readonly Observed[], n: number): QuadraticModel {
  const { kind, rows, rhs, xBest } = weightedSystem(data, n);
  return { kind, coefficients: solveWeighted(rows, rhs), xBest: xBest.slice() };
}

/** The rank-weighted system W Z β ≈ W y that fitModel solves, with the model kind and the centre xBest. */
export function weightedSystem(data: readonly Observed[], n: number): { kind: ModelKind; rows: number[][]; rhs: number[]; xBest: readonly number[] } {
  const order = bestFirst(data);
  const kind = modelKind(data.length, n);
  const xBest = data[order[0]].x;
  return { kind, ...rankWeighted(data, order, fitSize(data.length, coefficientCount(kind, n)), (x) => features(kind, minus(x, xBest))), xBest };
}

/** The data's indices by y, best first (ties keep the data order); at least one point. */
export function bestFirst(data: readonly Observed[]): number[] {
  if (data.length === 0) throw new InvalidInputError('surrogate: a model needs at least one data point');
  return data.map((_, i) => i).sort((a, b) => data[a].y - data[b].y);
}

/** The rows `row(x)` and values y of the best `m` data (`order` best first), weighted linearly from MAX_WEIGHT down to 1 by rank. */
export function rankWeighted(data: readonly Observed[], order: readonly number[], m: number, row: (x: readonly number[]) => number[]): { rows: number[][]; rhs: number[] } {
  const rows: number[][] = [];
  const rhs: number[] = [];
  order.slice(0, m).forEach((idx, r) => {
    const w = m === 1 ? MAX_WEIGHT : MAX_WEIGHT - ((MAX_WEIGHT - 1) * r) / (m - 1);
    rows.push(row(data[idx].x).map((z) => w * z));
    rhs.push(w * data[idx].y);
  });
  return { rows, rhs };
}

/** β = (W Z)⁺ W y: QR where it is well conditioned, else the pseudoinverse (fitModel's comment); a non-finite β_i is 0. */
export function solveWeighted(rows: number[][], rhs: number[]): number[] {
  const beta = leastSquaresQr(rows, rhs) ?? minNormLeastSquares(rows, rhs);
  return beta.map((b) => (Number.isFinite(b) ? b : 0));
}

/** f̂(x). */
export function predict(model: QuadraticModel, x: readonly number[]): number {
  const z = features(model.kind, minus(x, model.xBest));
  let s = 0;
  for (let i = 0; i < z.length; i++) s += model.coefficients[i] * z[i];
  return s;
}

/** c, b and H with f̂(x) = c + bᵀu + uᵀHu, u = x − xBest (H = 0 for the linear model). */
export function gradientAndHessian(model: QuadraticModel, n: number): { c: number; b: number[]; H: number[][] } {
  const beta = model.coefficients;
  const H = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  if (model.kind !== 'linear') for (let i = 0; i < n; i++) H[i][i] = beta[1 + n + i];
  if (model.kind === 'full') {
    let k = 1 + 2 * n;
    // The coefficient of x_i x_j (i < j) is split evenly over H_ij and H_ji.
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) H[i][j] = H[j][i] = beta[k++] / 2;
  }
  return { c: beta[0], b: beta.slice(1, 1 + n), H };
}

/**
 * The model's optimum, the point lq-CMA-ES injects: for a quadratic model the stationary point
 * x* = xBest − ½ H⁺ b (pseudoinverse, so a singular H still gives a finite point); for the linear
 * model, which has none, the best data point moved by −2b (a step down the model's slope, as the
 * reference implementation does).
 */
export function modelOptimum(model: QuadraticModel, n: number): number[] {
  const { b, H } = gradientAndHessian(model, n);
  if (model.kind === 'linear') return model.xBest.map((v, i) => v - 2 * b[i]);
  const u = minNormLeastSquares(H, b.map((v) => -v / 2));
  return u.map((v, i) => model.xBest[i] + (Number.isFinite(v) ? v : 0));
}
