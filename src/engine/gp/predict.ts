/**
 * GP posterior at new points (latent f, no observation noise). Paper §3 "Gaussian Process model":
 *   m_post(x) = c + k(x, X) α,   k_post(x, x') = k(x, x') − k(x, X) K⁻¹ k(X, x').
 *
 * Glossary: n training points, m query points, d dimension. Xs: m×d. K_sx: n×m cross-kernel,
 * V = L⁻¹ K_sx (n×m), so k(x, X) K⁻¹ k(X, x') = (VᵀV)_{xx'}.
 */
import { type Mat, solveLowerMat, zeros } from '../linalg/index.js';
import { rbfCross, toMat } from './kernel.js';
import type { GpModel } from './types.js';

export interface Prediction {
  mean: Float64Array;
  /** Latent posterior variance, clamped at 0 (rounding can make it slightly negative). */
  variance: Float64Array;
}

export interface JointPrediction {
  mean: Float64Array;
  /** m×m latent posterior covariance (symmetric). */
  cov: Mat;
}

function crossAndMean(model: GpModel, Xs: Mat): { Ksx: Mat; mean: Float64Array } {
  const Ksx = rbfCross(model.X, Xs, model.hyper); // n×m
  const n = model.X.rows, m = Xs.rows;
  const mean = new Float64Array(m).fill(model.hyper.constant);
  for (let i = 0; i < n; i++) {
    const a = model.alpha[i];
    for (let j = 0; j < m; j++) mean[j] += Ksx.data[i * m + j] * a;
  }
  return { Ksx, mean };
}

export function predict(model: GpModel, points: ArrayLike<ArrayLike<number>> | Mat): Prediction {
  const Xs = toMat(points, model.X.cols);
  const { Ksx, mean } = crossAndMean(model, Xs);
  const V = solveLowerMat(model.L, Ksx);
  const m = Xs.rows, n = model.X.rows;
  const variance = new Float64Array(m).fill(model.hyper.outputscale);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) variance[j] -= V.data[i * m + j] ** 2;
  for (let j = 0; j < m; j++) variance[j] = Math.max(variance[j], 0);
  return { mean, variance };
}

export function posteriorJoint(model: GpModel, points: ArrayLike<ArrayLike<number>> | Mat): JointPrediction {
  const Xs = toMat(points, model.X.cols);
  const { Ksx, mean } = crossAndMean(model, Xs);
  const V = solveLowerMat(model.L, Ksx);
  const m = Xs.rows, n = model.X.rows;
  const cov = rbfCross(Xs, Xs, model.hyper);
  // cov −= VᵀV, accumulated row by row of V so the inner loop is contiguous.
  const acc = zeros(m, m).data;
  for (let k = 0; k < n; k++) {
    const vk = k * m;
    for (let i = 0; i < m; i++) {
      const a = V.data[vk + i];
      if (a === 0) continue;
      const ai = i * m;
      for (let j = i; j < m; j++) acc[ai + j] += a * V.data[vk + j];
    }
  }
  for (let i = 0; i < m; i++) {
    for (let j = i; j < m; j++) {
      const v = cov.data[i * m + j] - acc[i * m + j];
      cov.data[i * m + j] = v;
      cov.data[j * m + i] = v;
    }
  }
  return { mean, cov };
}
