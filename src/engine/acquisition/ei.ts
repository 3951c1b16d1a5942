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
 * costs O(p·n + S·p) once v_x = L⁻¹k(X, x) is cached; the ε_x part is integrated exactly
 * (logQEiGain).
 */
import { cholesky, solveLower, zeros, type Mat } from '../linalg/index.js';
import type { GpModel } from '../gp/types.js';
import { hFast, logH, logHFastTail } from './normal.js';
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
  // Duplicated pending points make this singular; the jitter ladder of src/engine/linalg handles it (ARCHITECTURE.md rule 5).
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

/**
 * log of the marginal gain Δ(x) = q-EI(P ∪ {x}) − q-EI(P), Rao–Blackwellised: given the fixed
 * points' base samples ε_P, f_x is Gaussian with mean μ_s = m_x + lᵀε_P and std l_x, and the gain of
 * sample s is E[max(0, m_s − f_x)] = l_x·h((m_s − μ_s)/l_x), m_s = min(b, min_P f). Integrating ε_x
 * exactly instead of sampling it makes Δ smooth in x and never exactly 0, so log Δ ranks candidates
 * (and carries πBO's prior weight) even where every plain sample shows no improvement: far from the
 * incumbent a plain Monte Carlo q-EI is exactly 0 for all candidates and log q-EI is −∞.
 * Maximising Δ(x) is maximising q-EI(P ∪ {x}), since q-EI(P) does not depend on x.
 * With P empty this is exactly the analytic EI.
 */
export function logQEiGain(model: GpModel, fixed: FixedBatch, x: ArrayLike<number>, post: PointPosterior, best: number, base: BaseSamples): number {
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
  // Σ_s h(z_s), z_s = (m_s − μ_s)/l_x, in linear space while the largest term is representable
  // (h(−30) ≈ 1e-198); beyond, in log space (log-sum-exp) with the tail series.
  const S = base.length;
  const zs = new Float64Array(S);
  let zmax = -Infinity;
  for (let s = 0; s < S; s++) {
    const e = base[s];
    let mu = post.mean;
    for (let j = 0; j < p; j++) mu += l[j] * e[j];
    const z = (Math.min(best, fixed.minP[s]) - mu) / lx;
    zs[s] = z;
    if (z > zmax) zmax = z;
  }
  if (zmax >= -30) {
    let acc = 0;
    // Below −38 h underflows to 0 anyway; skipping saves two exp calls per far sample.
    for (let s = 0; s < S; s++) if (zs[s] > -38) acc += hFast(zs[s]);
    return Math.log(lx * (acc / S));
  }
  const top = logHFastTail(zmax);
  let acc = 0;
  for (let s = 0; s < S; s++) acc += Math.exp(logHFastTail(zs[s]) - top);
  return Math.log(lx) + top + Math.log(acc / S);
}

/** q-EI of a whole batch B by Monte Carlo (base needs ≥ |B| columns). */
export function qEiMc(model: GpModel, batch: ArrayLike<number>[], best: number, base: BaseSamples): number {
  const fixed = fixBatch(model, batch, base);
  let acc = 0;
  for (let s = 0; s < base.length; s++) if (fixed.minP[s] < best) acc += best - fixed.minP[s];
  return acc / base.length;
}
