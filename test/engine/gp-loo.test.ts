/**
 * Leave-one-out predictive of the GP with basis functions (gp/loo.ts) and the basis choice by it
 * (option mean_basis: "loo", docs/ALGORITHM-default.md §L).
 * Expected values come from brute force: for each i, the GP is conditioned on the other n − 1 points
 * with β re-estimated by GLS on them, and y_i is predicted with R&W (2006) eq. 2.42 — mean
 * h_iᵀβ̂ + k_iᵀK⁻¹(y − Hβ̂), variance k_ii − k_iᵀK⁻¹k_i + Rᵀ(HᵀK⁻¹H)⁻¹R, R = h_i − HᵀK⁻¹k_i (all on the
 * n − 1 points, k_ii with the noise since y_i is an observation) — and the log density of y_i under it.
 */
import { describe, expect, it } from 'vitest';
import { type BasisKind, basisMatrix, lowerInverse, looPredictive, toMat, type GpHyper } from '../../src/engine/gp/index.js';
import { kernelMatrix } from '../../src/engine/gp/kernel.js';
import { type Mat, cholesky, cholSolve, cholSolveMat, fromRows } from '../../src/engine/linalg/index.js';
import { fitModel } from '../../src/engine/strategies/probnes-bq.js';
import { Rng } from '../../src/engine/random/index.js';

function sub(M: Mat, rows: number[], cols: number[]): Mat {
  const out: Mat = { rows: rows.length, cols: cols.length, data: new Float64Array(rows.length * cols.length) };
  rows.forEach((r, a) => cols.forEach((c, b) => (out.data[a * cols.length + b] = M.data[r * M.cols + c])));
  return out;
}

/** The prediction of y_i from the other points by refitting β on them (R&W eq. 2.42). */
function bruteForce(K: Mat, H: Mat, y: number[], i: number): { mean: number; variance: number } {
  const n = K.rows, p = H.cols;
  const rest = Array.from({ length: n }, (_, j) => j).filter((j) => j !== i);
  const Kr = sub(K, rest, rest), Hr = sub(H, rest, Array.from({ length: p }, (_, a) => a));
  const yr = rest.map((j) => y[j]);
  const L = cholesky(Kr, { maxJitterRatio: 0 }).L;
  const KiH = cholSolveMat(L, Hr); // (n−1)×p
  const M: Mat = { rows: p, cols: p, data: new Float64Array(p * p) };
  for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) {
    let s = 0;
    for (let k = 0; k < n - 1; k++) s += Hr.data[k * p + a] * KiH.data[k * p + b];
    M.data[a * p + b] = s;
  }
  const LM = cholesky(M, { maxJitterRatio: 0 }).L;
  const Kiy = cholSolve(L, yr);
  const rhs = Array.from({ length: p }, (_, a) => Hr.data.filter((_, idx) => idx % p === a).reduce((s, v, k) => s + v * Kiy[k], 0));
  const beta = cholSolve(LM, rhs);
  const resid = yr.map((v, k) => v - Array.from({ length: p }, (_, a) => Hr.data[k * p + a] * beta[a]).reduce((s, t) => s + t, 0));
  const alpha = cholSolve(L, resid);
  const ki = rest.map((j) => K.data[i * n + j]);
  const hi = Array.from({ length: p }, (_, a) => H.data[i * p + a]);
  const Kik = cholSolve(L, ki);
  const mean = hi.reduce((s, v, a) => s + v * beta[a], 0) + ki.reduce((s, v, k) => s + v * alpha[k], 0);
  const R = hi.map((v, a) => v - Array.from({ length: n - 1 }, (_, k) => Hr.data[k * p + a] * Kik[k]).reduce((s, t) => s + t, 0));
  const MiR = cholSolve(LM, R);
  const variance = K.data[i * n + i] - ki.reduce((s, v, k) => s + v * Kik[k], 0) + R.reduce((s, v, a) => s + v * MiR[a], 0);
  return { mean, variance };
}

describe('leave-one-out predictive with basis functions (closed form against refitting without each point)', () => {
  const d = 2, n = 14, rng = Rng.fromSeed(5);
  const X = Array.from({ length: n }, () => Array.from(rng.normals(d)));
  const y = X.map((u) => Math.sin(2 * u[0]) + 0.5 * u[1] ** 2 + 0.1 * rng.normal());
  const hyper: GpHyper = { lengthscales: [0.8, 1.3], outputscale: 1.7, noise: 0.05, constant: 0 };
  const K = kernelMatrix(toMat(X), hyper);
  const L = cholesky(K, { maxJitterRatio: 0 }).L;
  const W = lowerInverse(cholesky(fromRows([[1.2, 0.3], [0.3, 0.8]])).L);

  it.each<BasisKind>(['constant', 'linear', 'diagonal', 'full'])('%s basis: μ_i, σ_i² and the log density of every point', (kind) => {
    const H = basisMatrix(kind, toMat(X), [0.1, -0.2], W);
    const loo = looPredictive(L, H, y)!;
    expect(loo).not.toBeNull();
    let total = 0;
    for (let i = 0; i < n; i++) {
      const bf = bruteForce(K, H, y, i);
      expect(loo.mean[i]).toBeCloseTo(bf.mean, 9);
      expect(loo.variance[i] / bf.variance).toBeCloseTo(1, 9);
      const lp = -0.5 * Math.log(2 * Math.PI * bf.variance) - (y[i] - bf.mean) ** 2 / (2 * bf.variance);
      expect(loo.terms[i]).toBeCloseTo(lp, 8);
      total += lp;
    }
    expect(loo.total).toBeCloseTo(total, 7);
  });

  it('is null when a point is needed to determine β (n = p + 1 with a basis that interpolates)', () => {
    // Three points, the linear basis at d = 2 (p = 3): without any one of them β is not determined.
    const H = basisMatrix('linear', toMat(X.slice(0, 3)), [0, 0], W);
    const L3 = cholesky(kernelMatrix(toMat(X.slice(0, 3)), hyper), { maxJitterRatio: 0 }).L;
    expect(looPredictive(L3, H, y.slice(0, 3))).toBeNull();
  });
});

describe('basis choice by leave-one-out (mean_basis: "loo")', () => {
  it('an exact rotated quadratic: the full basis predicts every point and is chosen', () => {
    const d = 2, rng = Rng.fromSeed(9);
    const U = Array.from({ length: 20 }, () => Array.from(rng.normals(d)));
    const y = U.map((u) => -(1.5 * u[0] ** 2 + 1.2 * u[0] * u[1] + 0.8 * u[1] ** 2) + 0.3 * u[0]);
    const mean = { kind: 'quadratic' as const, centre: [0, 0], cov: [[1, 0], [0, 1]], selection: 'loo' as const, looSe: 2 };
    const out = fitModel(U, y, { warmStart: null, restarts: 0, rng, mean });
    expect(out.basis).toBe('full');
    expect(out.quad!.A[0][1]).toBeCloseTo(-0.6, 4);
  });

  it('loo-constant: an exact linear trend keeps the count rule\'s basis (its LOO beats the constant mean by many standard errors)', () => {
    const d = 2, rng = Rng.fromSeed(10);
    const U = Array.from({ length: 20 }, () => Array.from(rng.normals(d)));
    const y = U.map((u) => 2 * u[0] - u[1]);
    const mean = { kind: 'quadratic' as const, centre: [0, 0], cov: [[1, 0], [0, 1]], selection: 'loo-constant' as const, looSe: 2 };
    const out = fitModel(U, y, { warmStart: null, restarts: 0, rng, mean });
    expect(out.basis).toBe('full');
    expect(out.quad!.b[0]).toBeCloseTo(2, 4);
    // "loo" compares the linear basis too, which predicts this exactly with fewer coefficients.
    expect(fitModel(U, y, { warmStart: null, restarts: 0, rng, mean: { ...mean, selection: 'loo' } }).basis).toBe('linear');
  });

  it('the count rule is unchanged by the selection options it does not use', () => {
    const d = 2, rng = Rng.fromSeed(12);
    const U = Array.from({ length: 12 }, () => Array.from(rng.normals(d)));
    const y = U.map((u) => Math.cos(3 * u[0]) + u[1]);
    const base = { kind: 'quadratic' as const, centre: [0, 0], cov: [[1, 0], [0, 1]] };
    const a = fitModel(U, y, { warmStart: null, restarts: 0, rng: Rng.fromSeed(1), mean: base });
    const b = fitModel(U, y, { warmStart: null, restarts: 0, rng: Rng.fromSeed(1), mean: { ...base, selection: 'count', looSe: 2 } });
    expect(b.basis).toBe('full');
    expect(Array.from(b.model.alpha)).toEqual(Array.from(a.model.alpha));
  });
});

describe('the gated choice (mean_basis: "loo-gated", docs/ALGORITHM-default.md §M)', () => {
  const gate = { wide: 0.3, scale: 1, r2: 0.9 };
  const gated = (cov: number[][]) => ({ kind: 'quadratic' as const, centre: [0], cov, selection: 'loo-gated' as const, looSe: 1, gate });
  const fit = (U: number[][], y: number[], mean: Parameters<typeof fitModel>[2]['mean']) => fitModel(U, y, { warmStart: null, restarts: 0, rng: Rng.fromSeed(3), mean });

  // Rastrigin 1-D (x² − 10 cos 2πx, scaled) on 20 draws from ν = N(0, 0.5²), the phase of the trace in
  // docs/BENCHMARKS.md: the count rule fits a full quadratic whose R² is negative, and the residual
  // GP's length scale (≈ 0.37) is below σ = 0.5, i.e. the objective varies within ν.
  const rng = Rng.fromSeed(7);
  const U = Array.from({ length: 20 }, () => [0.5 * rng.normal()]);
  const osc = U.map((u) => -(u[0] ** 2 - 10 * Math.cos(2 * Math.PI * u[0])) / 10);

  it('an oscillation within a wide ν: the constant mean competes and is chosen, as with loo-constant', () => {
    const count = fit(U, osc, { kind: 'quadratic', centre: [0], cov: [[0.25]] });
    expect(count.basis).toBe('full');
    expect(count.model.hyper.lengthscales[0]).toBeLessThan(0.5);
    const ref = fit(U, osc, { ...gated([[0.25]]), selection: 'loo-constant' });
    const out = fit(U, osc, gated([[0.25]]));
    expect(ref.basis).toBe('constant');
    expect(out.basis).toBe('constant');
    expect(Array.from(out.model.alpha)).toEqual(Array.from(ref.model.alpha));
  });

  it('the same points with the σ of ν below τ (0.25 < 0.3): the count rule\'s basis is kept', () => {
    expect(fit(U, osc, gated([[0.0625]])).basis).toBe('full');
  });

  it('an exact quadratic (R² = 1 ≥ ρ) keeps the count rule\'s basis and its fit, bit for bit', () => {
    const y = U.map((u) => -(1.5 * u[0] ** 2) + 0.3 * u[0]);
    const a = fit(U, y, { kind: 'quadratic', centre: [0], cov: [[0.25]] });
    const b = fit(U, y, gated([[0.25]]));
    expect(b.basis).toBe('full');
    expect(Array.from(b.model.alpha)).toEqual(Array.from(a.model.alpha));
    expect(b.quad!.A[0][0]).toBeCloseTo(-1.5, 4);
  });
});
