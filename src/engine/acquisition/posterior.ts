/**
 * Latent GP posterior at single points, with input gradients, straight from a fitted GpModel.
 *
 * Why not gp.predict: the acquisition optimiser evaluates one point at a time thousands of times and
 * needs ∂mean/∂x and ∂var/∂x; the joint q-EI needs the intermediate v = L⁻¹k(X, x) to extend a
 * Cholesky factor by one row. Everything here is read-only on the model.
 *
 * Glossary: n training points X (n×d, the model's inputs), x (d) one query point,
 * k = k(X, x) (n), v = L⁻¹k (n), w = K⁻¹k = L⁻ᵀv (n), s outputscale, ℓ lengthscales (d).
 * mean(x) = c + kᵀα;  var(x) = s − vᵀv (latent, no noise).
 * ∂k_i/∂x = −k_i (x − X_i)/ℓ²;  ∂mean/∂x = Σ α_i ∂k_i/∂x;  ∂var/∂x = −2 Σ w_i ∂k_i/∂x.
 */
import { solveLower, solveLowerT } from '../linalg/index.js';
import type { GpModel } from '../gp/types.js';
import { inverseSquaredLengthscales, scaledSqDistRow } from '../gp/kernel.js';

/** Floor on the latent variance, relative to the outputscale: keeps σ > 0 at training inputs. */
export const VAR_FLOOR = 1e-12;

export interface PointPosterior {
  mean: number;
  variance: number;
  /** v = L⁻¹ k(X, x): reused to correlate x with other points. */
  v: Float64Array;
  dmean?: Float64Array;
  dvar?: Float64Array;
}

/** k(a, b) for the model's ARD RBF kernel. */
export function kernel(model: GpModel, a: ArrayLike<number>, b: ArrayLike<number>): number {
  const r2 = new Float64Array(1);
  const B = { rows: 1, cols: b.length, data: Float64Array.from(b) };
  scaledSqDistRow(Float64Array.from(a), 0, B, 0, 1, inverseSquaredLengthscales(model.hyper.lengthscales), r2, 0, 1);
  return model.hyper.outputscale * Math.exp(-0.5 * r2[0]);
}

/** k(X, x): the covariance of x with every training input. */
export function crossKernel(model: GpModel, x: ArrayLike<number>): Float64Array {
  const k = new Float64Array(model.X.rows);
  scaledSqDistRow(Float64Array.from(x), 0, model.X, 0, model.X.rows, inverseSquaredLengthscales(model.hyper.lengthscales), k, 0, 1);
  const s = model.hyper.outputscale;
  for (let i = 0; i < k.length; i++) k[i] = s * Math.exp(-0.5 * k[i]);
  return k;
}

export function pointPosterior(model: GpModel, x: ArrayLike<number>, withGrad = false): PointPosterior {
  const k = crossKernel(model, x);
  const { rows: n, cols: d, data } = model.X;
  const v = solveLower(model.L, k);
  let mean = model.hyper.constant;
  let vv = 0;
  for (let i = 0; i < n; i++) {
    mean += k[i] * model.alpha[i];
    vv += v[i] * v[i];
  }
  const s = model.hyper.outputscale;
  const variance = Math.max(s - vv, VAR_FLOOR * s);
  if (!withGrad) return { mean, variance, v };
  const w = solveLowerT(model.L, v);
  const dmean = new Float64Array(d);
  const dvar = new Float64Array(d);
  const ls = model.hyper.lengthscales;
  for (let i = 0; i < n; i++) {
    const a = model.alpha[i] * k[i];
    const b = -2 * w[i] * k[i];
    for (let j = 0; j < d; j++) {
      const g = -(x[j] - data[i * d + j]) / (ls[j] * ls[j]);
      dmean[j] += a * g;
      dvar[j] += b * g;
    }
  }
  // At the variance floor the true variance is flat (clamped): report a zero gradient there.
  if (variance === VAR_FLOOR * s) dvar.fill(0);
  return { mean, variance, v, dmean, dvar };
}
