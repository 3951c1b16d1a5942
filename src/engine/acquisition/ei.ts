/**
 * Expected improvement for MINIMISATION, analytic (one point) and Monte Carlo (a batch).
 *
 * Glossary: b = best observed (standardised) value, m/σ² latent posterior mean/variance at x,
 * z = (b − m)/σ. EI(x) = E[max(0, b − f(x))] = σ·h(z), h(z) = φ(z) + zΦ(z).
 * q-EI(B) = E[max(0, b − min_{x∈B} f(x))] over the joint latent posterior at the batch B, estimated
 * with S fixed base samples ε (common random numbers: the estimate is a deterministic, piecewise
 * smooth function of B, so candidates are compared without extra noise and a local optimiser can
 * run on it), f = m_B + L_B ε with L_B the Cholesky factor of the joint posterior covariance.
 *
 * A batch grows one point at a time (greedy sequential q-EI): the points already fixed (pending plus
 * chosen) keep their factor L_P and samples; a candidate x only adds one row [l, l_x] to the factor,
 * l = L_P⁻¹ c, c = k(P, x) − V_Pᵀ v_x, l_x² = σ²(x) − lᵀl, so that its sample is
 * f_x = m_x + lᵀ ε_P + l_x ε_x, exactly the last coordinate of the joint draw. Scoring a candidate
 * costs O(p·n + S·p) once v_x = L⁻¹k(X, x) is cached.
 */
import { cholesky, solveLower, zeros, type Mat } from '../linalg/index.js';
import type { GpModel } from '../gp/types.js';
import { logH } from './normal.js';
import { kernel, pointPosterior, VAR_FLOOR, type PointPosterior } from './posterior.js';

/** log EI at x, with its gradient in x when asked (analytic through ∂m/∂x and ∂σ²/∂x). */
export function logEi(model: GpModel, x: ArrayLike<number>, best: number, withGrad = false): { value: number; grad?: Float64Array } {
  const post = pointPosterior(model, x, withGrad);
  return logEiFromPosterior(post, best);
}

export function logEiFromPosterior(post: PointPosterior, best: number): { value: number; grad?: Float64Array } {
  const sigma = Math.sqrt(post.variance);
  const z = (best - post.mean) / sigma;
  const { logh, cdfOverH, pdfOverH } = logH(z);
  const value = Math.log(sigma) + logh;
  if (!post.dmean || !post.dvar) return { value };
  // ∂EI/∂m = −Φ(z), ∂EI/∂σ = φ(z); divided by EI = σh(z) for the log; ∂σ = ∂σ²/(2σ).
  const gm = -cdfOverH / sigma;
  const gs = pdfOverH / sigma / (2 * sigma);
  const grad = new Float64Array(post.dmean.length);
  for (let j = 0; j < grad.length; j++) grad[j] = gm * post.dmean[j] + gs * post.dvar[j];
  return { value, grad };
}

/** Analytic EI from a Gaussian marginal (used by tests and as a reference). */
export function expectedImprovement(mean: number, variance: number, best: number): number {
  const sigma = Math.sqrt(variance);
  return sigma * Math.exp(logH((best - mean) / sigma).logh);
}

/** Points whose joint posterior is fixed while the batch grows. */
export interface FixedBatch {
  points: ArrayLike<number>[];
  posts: PointPosterior[];
  /** Lower Cholesky factor of the joint latent posterior covariance (p×p). */
  LP: Mat;
  /** min over the fixed points' samples, per Monte Carlo sample (+∞ when there are none). */
  minP: Float64Array;
}

/**
 * Base samples: S rows of `cols` independent N(0, 1) values. Column j drives the j-th point of the
 * batch (pending points first), so a point keeps its samples when it moves from candidate to fixed.
 */
export type BaseSamples = Float64Array[];

export function fixBatch(model: GpModel, points: ArrayLike<number>[], base: BaseSamples, posts?: PointPosterior[]): FixedBatch {
  const p = points.length;
  const ps = posts ?? points.map((x) => pointPosterior(model, x));
  const cov = zeros(p, p);
  for (let i = 0; i < p; i++) {
    for (let j = 0; j <= i; j++) {
      let c = i === j ? ps[i].variance : kernel(model, points[i], points[j]);
      if (i !== j) for (let k = 0; k < ps[i].v.length; k++) c -= ps[i].v[k] * ps[j].v[k];
      cov.data[i * p + j] = c;
      cov.data[j * p + i] = c;
    }
  }
  // Duplicated pending points make this singular; the jitter ladder handles it (linalg rule 5).
  const LP = p > 0 ? cholesky(cov).L : cov;
  const S = base.length;
  const minP = new Float64Array(S).fill(Infinity);
  for (let s = 0; s < S; s++) {
    const z = base[s];
    for (let i = 0; i < p; i++) {
      let f = ps[i].mean;
      for (let k = 0; k <= i; k++) f += LP.data[i * p + k] * z[k];
      if (f < minP[s]) minP[s] = f;
    }
  }
  return { points, posts: ps, LP, minP };
}

/** q-EI of (fixed ∪ {x}) by Monte Carlo with the shared base samples; `post` is x's posterior. */
export function qEiWithCandidate(model: GpModel, fixed: FixedBatch, x: ArrayLike<number>, post: PointPosterior, best: number, base: BaseSamples): number {
  const p = fixed.points.length;
  const c = new Float64Array(p);
  for (let j = 0; j < p; j++) {
    let cj = kernel(model, fixed.points[j], x);
    const vj = fixed.posts[j].v;
    for (let k = 0; k < vj.length; k++) cj -= vj[k] * post.v[k];
    c[j] = cj;
  }
  const l = p > 0 ? solveLower(fixed.LP, c) : c;
  let ll = 0;
  for (let j = 0; j < p; j++) ll += l[j] * l[j];
  const lx = Math.sqrt(Math.max(post.variance - ll, VAR_FLOOR * model.hyper.outputscale));
  let acc = 0;
  for (let s = 0; s < base.length; s++) {
    const z = base[s];
    let f = post.mean + lx * z[p];
    for (let j = 0; j < p; j++) f += l[j] * z[j];
    const m = Math.min(f, fixed.minP[s]);
    if (m < best) acc += best - m;
  }
  return acc / base.length;
}

/** q-EI of a whole batch B by Monte Carlo (base needs ≥ |B| columns). */
export function qEiMc(model: GpModel, batch: ArrayLike<number>[], best: number, base: BaseSamples): number {
  const fixed = fixBatch(model, batch, base);
  let acc = 0;
  for (let s = 0; s < base.length; s++) if (fixed.minP[s] < best) acc += best - fixed.minP[s];
  return acc / base.length;
}
