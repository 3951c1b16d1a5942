/**
 * Sampled (score-function) gradient from one joint GP posterior sample (ALGORITHM.md §3, option
 * `gradient: "sampled"`; paper §4.1 "expected or sampled gradient", ablation figure).
 *
 * Glossary: N sample count, d dimension, n training points. x_k ~ ν = N(μ, Σ) (N×d; ALGORITHM.md
 * §3 calls them z_k, a letter the engine keeps for standard-normal draws) drawn as
 * x_k = μ + L_Σ ε_k, so Σ⁻¹(x_k − μ) = L_Σ⁻ᵀ ε_k needs no inverse; f̃ (N) one joint latent sample of
 * the GP posterior at the x_k.
 *   ĝ_μ = (1/N) Σ_k (f̃_k − c) Σ⁻¹(x_k − μ)
 *   Ĝ   = (1/N) Σ_k (f̃_k − c) · ½ (Σ⁻¹(x_k − μ)(x_k − μ)ᵀΣ⁻¹ − Σ⁻¹)
 * Cost: the joint sample needs the N×N posterior covariance and its Cholesky, O(N²n + N³/3):
 * about a second at N = 1000 in this engine, acceptable for an ablation option.
 */
import { InvalidInputError } from '../errors.js';
import { type Mat, cholesky, cholInverseSym, solveLowerT, zeros } from '../linalg/index.js';
import type { Rng } from '../random/index.js';
import { posteriorJoint } from '../gp/predict.js';
import type { GpModel } from '../gp/types.js';
import { type CovInput, covMat } from './measure.js';

export interface SampledGradient {
  gradMean: Float64Array;
  gradCov: Mat;
  /** The N sample points x_k (N×d). */
  points: Mat;
  /** The joint posterior sample f̃ at them (N). */
  values: Float64Array;
}

/** One joint draw f̃ ~ N(m, C) of the latent posterior at the rows of X. */
function jointSample(model: GpModel, X: Mat, rng: Rng): Float64Array {
  const { mean, cov } = posteriorJoint(model, X);
  // The posterior covariance at many nearby points is numerically singular: a tiny absolute floor
  // (relative to s) keeps the jitter ladder meaningful even when every variance has collapsed.
  const N = X.rows;
  for (let i = 0; i < N; i++) cov.data[i * N + i] += 1e-10 * model.hyper.outputscale;
  const { L } = cholesky(cov);
  const xi = rng.normals(N);
  const f = Float64Array.from(mean);
  for (let i = 0; i < N; i++) {
    let s = 0;
    for (let k = 0; k <= i; k++) s += L.data[i * N + k] * xi[k];
    f[i] += s;
  }
  return f;
}

export function sampledGradient(model: GpModel, mean: ArrayLike<number>, cov: CovInput, rng: Rng, N = 1000): SampledGradient {
  const d = model.X.cols;
  if (!(Number.isInteger(N) && N >= 1)) throw new InvalidInputError(`sample count must be a positive integer, got ${N}`);
  if (mean.length !== d) throw new InvalidInputError(`mean has dimension ${mean.length}, expected ${d}`);
  const C = covMat(cov, d);
  const { L: LC } = cholesky(C);
  const X = zeros(N, d);
  const P = zeros(N, d); // rows p_k = Σ⁻¹(x_k − μ)
  for (let k = 0; k < N; k++) {
    const eps = rng.normals(d);
    for (let i = 0; i < d; i++) {
      let s = mean[i];
      for (let j = 0; j <= i; j++) s += LC.data[i * d + j] * eps[j];
      X.data[k * d + i] = s;
    }
    P.data.set(solveLowerT(LC, eps), k * d);
  }
  const values = jointSample(model, X, rng);
  const g = new Float64Array(d);
  const G = zeros(d, d);
  let fSum = 0;
  for (let k = 0; k < N; k++) {
    const f = values[k] - model.hyper.constant;
    fSum += f;
    for (let a = 0; a < d; a++) {
      const fp = f * P.data[k * d + a];
      g[a] += fp;
      for (let b = 0; b < d; b++) G.data[a * d + b] += 0.5 * fp * P.data[k * d + b];
    }
  }
  const Cinv = cholInverseSym(LC);
  for (let a = 0; a < d; a++) g[a] /= N;
  for (let i = 0; i < d * d; i++) G.data[i] = G.data[i] / N - (0.5 * fSum * Cinv.data[i]) / N;
  return { gradMean: g, gradCov: G, points: X, values };
}
