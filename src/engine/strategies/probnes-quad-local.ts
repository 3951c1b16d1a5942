/**
 * TEMPORARY stand-in for src/engine/quadrature (being written in parallel): the closed forms of
 * ALGORITHM.md §3 and the fast Schur form of §5, so the strategies can run before it lands. Once
 * the quadrature module exists, probnes-bq.ts switches to it and this file is cross-checked
 * against it and deleted.
 *
 * Glossary (shapes): n active points, d dimension; S = Σ + Λ (d×d), r_j = u_j − μ, p_j = S⁻¹ r_j,
 * t_j = s·sqrt(det Λ/det S)·exp(−½ r_jᵀ S⁻¹ r_j) (n), w_j = α_j t_j.
 */
import type { GpModel } from '../gp/types.js';
import { kernelMatrix, rbfCross, toMat } from '../gp/index.js';
import { type Mat, cholSolve, cholesky, fromRows, logDetFromChol, solveLower, solveLowerMat, zeros } from '../linalg/index.js';
import type { Rng } from '../random/index.js';

function sPlusLambda(model: GpModel, cov: number[][], covScale: number): Mat {
  const d = cov.length;
  const S = fromRows(cov);
  for (let i = 0; i < d * d; i++) S.data[i] *= covScale;
  for (let i = 0; i < d; i++) S.data[i * d + i] += model.hyper.lengthscales[i] ** 2;
  return S;
}

function logDetLambda(model: GpModel): number {
  return model.hyper.lengthscales.reduce((s, l) => s + 2 * Math.log(l), 0);
}

/** t_j (n) for rows of P against ν, and the factor of S. */
export function kernelMeansLocal(model: GpModel, P: Mat, mean: number[], cov: number[][]): { t: Float64Array; LS: Mat } {
  const d = mean.length;
  const LS = cholesky(sPlusLambda(model, cov, 1)).L;
  const logc = Math.log(model.hyper.outputscale) + 0.5 * (logDetLambda(model) - logDetFromChol(LS));
  const t = new Float64Array(P.rows);
  const r = new Float64Array(d);
  for (let j = 0; j < P.rows; j++) {
    for (let i = 0; i < d; i++) r[i] = P.data[j * d + i] - mean[i];
    const y = solveLower(LS, r);
    let q = 0;
    for (let i = 0; i < d; i++) q += y[i] * y[i];
    t[j] = Math.exp(logc - 0.5 * q);
  }
  return { t, LS };
}

export function integralMomentsLocal(model: GpModel, mean: number[], cov: number[][]): { mean: number; variance: number } {
  const { t } = kernelMeansLocal(model, model.X, mean, cov);
  let e = model.hyper.constant;
  for (let j = 0; j < t.length; j++) e += model.alpha[j] * t[j];
  const L2 = cholesky(sPlusLambda(model, cov, 2)).L;
  const R = model.hyper.outputscale * Math.exp(0.5 * (logDetLambda(model) - logDetFromChol(L2)));
  const Kt = cholSolve(model.L, t);
  let tKt = 0;
  for (let j = 0; j < t.length; j++) tKt += t[j] * Kt[j];
  return { mean: e, variance: R - tKt };
}

export function expectedGradientLocal(model: GpModel, mean: number[], cov: number[][]): { gMean: Float64Array; gCov: Mat } {
  const d = mean.length;
  const { t, LS } = kernelMeansLocal(model, model.X, mean, cov);
  const gMean = new Float64Array(d);
  const gCov = zeros(d, d);
  let W = 0;
  const r = new Float64Array(d);
  for (let j = 0; j < t.length; j++) {
    const w = model.alpha[j] * t[j];
    W += w;
    for (let i = 0; i < d; i++) r[i] = model.X.data[j * d + i] - mean[i];
    const p = cholSolve(LS, r);
    for (let a = 0; a < d; a++) {
      gMean[a] += w * p[a];
      for (let b = 0; b < d; b++) gCov.data[a * d + b] += 0.5 * w * p[a] * p[b];
    }
  }
  // G = ½ (Σ w p pᵀ − W S⁻¹)
  for (let b = 0; b < d; b++) {
    const e = new Float64Array(d);
    e[b] = 1;
    const col = cholSolve(LS, e);
    for (let a = 0; a < d; a++) gCov.data[a * d + b] -= 0.5 * W * col[a];
  }
  return { gMean, gCov };
}

/** Score-function gradient on one joint posterior sample at n draws from ν (ablation). */
export function sampledGradientLocal(model: GpModel, mean: number[], cov: number[][], rng: Rng, n: number): { gMean: Float64Array; gCov: Mat } {
  void model; void mean; void cov; void rng; void n;
  throw new Error('sampled gradient: waiting for the quadrature module');
}

/** §5 fast Schur form: a(B) − const = (τ_B − K_BA v)ᵀ S_B⁻¹ (τ_B − K_BA v). */
export function prepareBatchSelectionLocal(model: GpModel, mean: number[], cov: number[][], pending: number[][]) {
  const d = mean.length;
  const rows: number[][] = [];
  for (let i = 0; i < model.X.rows; i++) rows.push(Array.from(model.X.data.subarray(i * d, (i + 1) * d)));
  const A = toMat([...rows, ...pending], d);
  const LA = cholesky(kernelMatrix(A, model.hyper)).L;
  const tauA = kernelMeansLocal(model, A, mean, cov).t;
  const v = cholSolve(LA, tauA);
  const score = (batch: number[][]): number => {
    const B = toMat(batch, d);
    const q = B.rows;
    const tauB = kernelMeansLocal(model, B, mean, cov).t;
    const KAB = rbfCross(A, B, model.hyper); // n×q
    const Wm = solveLowerMat(LA, KAB);
    const KBB = kernelMatrix(B, model.hyper);
    const SB = zeros(q, q);
    const res = new Float64Array(q);
    for (let i = 0; i < q; i++) {
      let s = tauB[i];
      for (let k = 0; k < A.rows; k++) s -= KAB.data[k * q + i] * v[k];
      res[i] = s;
      for (let j = 0; j < q; j++) {
        let w = KBB.data[i * q + j];
        for (let k = 0; k < A.rows; k++) w -= Wm.data[k * q + i] * Wm.data[k * q + j];
        SB.data[i * q + j] = w;
      }
    }
    const LB = cholesky(SB).L;
    const z = solveLower(LB, res);
    let a = 0;
    for (let i = 0; i < q; i++) a += z[i] * z[i];
    return a;
  };
  return {
    score,
    selectBest(cands: number[][][]): { index: number; score: number } {
      let best = -Infinity, index = 0;
      cands.forEach((b, i) => {
        const s = score(b);
        if (s > best) [best, index] = [s, i];
      });
      return { index, score: best };
    },
  };
}
