/**
 * The GP's small parts against independent computations:
 *
 * - kernel.ts: the four-row tiling of the scaled distances against the plain double loop, for every
 *   remainder (0–3 rows after the tiles), a stride and an offset; K = s·RBF + σ²I + diag(known);
 * - predict.ts: the posterior mean c + k(x, X)K⁻¹(y − c) and covariance k(x, x′) − k(x, X)K⁻¹k(X, x′)
 *   computed with ml-matrix's inverse (paper §3);
 * - priors.ts: log Γ at exact values (Γ(n) = (n − 1)!, Γ(½) = √π, Γ(¼) = 3.6256099082219083…),
 *   the Gamma log-density and its derivative (finite differences), the mode, and draws whose mean
 *   and variance (a/b, a/b²) hold within five Monte Carlo standard errors;
 * - mixed-kernel.ts: the overlap kernel and its means as brute-force sums (ALGORITHM.md §27).
 */
import { describe, expect, it } from 'vitest';
import { Matrix, inverse } from 'ml-matrix';
import { fromRows } from '../../src/engine/linalg/index.js';
import { inverseSquaredLengthscales, kernelMatrix, logThetaFromHyper, rbfCross, scaledSqDist, scaledSqDistRow, toMat } from '../../src/engine/gp/kernel.js';
import { buildModel } from '../../src/engine/gp/fit.js';
import { posteriorJoint, predict } from '../../src/engine/gp/predict.js';
import { boPriors, dLogGammaPdf, gammaMode, logGamma, logGammaPdf, priorModeHyper, probnesPriors, sampleGamma, samplePriorHyper } from '../../src/engine/gp/priors.js';
import { blockOffsets, blockWeights, encodeMixed, oneHot, overlapDoubleMean, overlapKernel, overlapKernelMean } from '../../src/engine/gp/mixed-kernel.js';
import { Rng } from '../../src/engine/random/index.js';

/** Deterministic pseudo-random rows. */
const rows = (n: number, d: number, seed: number) => Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, k) => Math.sin(seed + 1.7 * i + 2.3 * k) * 1.5));
const direct = (a: number[], b: number[], l: number[]) => a.reduce((s, v, k) => s + ((v - b[k]!) / l[k]!) ** 2, 0);

describe('scaled squared distances', () => {
  const l = [0.5, 2, 1.3];
  it('every remainder after the four-row tiles, at a stride and an offset, as the plain loop', () => {
    const A = rows(2, 3, 1), B = fromRows(rows(11, 3, 2)), Bm = rows(11, 3, 2);
    const w = inverseSquaredLengthscales(l);
    const a = Float64Array.from(A.flat());
    for (let j0 = 0; j0 <= 3; j0++) {
      for (let j1 = j0; j1 <= 11; j1++) {
        const stride = 2, o = 3;
        const out = new Float64Array(o + 2 * 11 + 1).fill(-1);
        scaledSqDistRow(a, 3, B, j0, j1, w, out, o, stride);
        for (let j = j0; j < j1; j++) expect(out[o + (j - j0) * stride], `${j0}..${j1}, row ${j}`).toBeCloseTo(direct(A[1]!, Bm[j]!, l), 12);
        // Nothing else written.
        out.forEach((v, i) => { if (i < o || i >= o + (j1 - j0) * stride || (i - o) % stride !== 0) expect(v, `slot ${i}`).toBe(-1); });
      }
    }
  });

  it('the matrix of them, the cross-kernel, and the dimension checks', () => {
    const A = rows(5, 3, 3), Bm = rows(6, 3, 4);
    const D = scaledSqDist(fromRows(A), fromRows(Bm), l);
    const K = rbfCross(fromRows(A), fromRows(Bm), { lengthscales: l, outputscale: 1.7 });
    for (let i = 0; i < 5; i++) for (let j = 0; j < 6; j++) {
      expect(D.data[i * 6 + j]).toBeCloseTo(direct(A[i]!, Bm[j]!, l), 12);
      expect(K.data[i * 6 + j]).toBeCloseTo(1.7 * Math.exp(-0.5 * direct(A[i]!, Bm[j]!, l)), 12);
    }
    expect(() => scaledSqDist(fromRows(A), fromRows(rows(2, 2, 1)), l)).toThrow('scaledSqDist: dimensions differ');
    expect(() => scaledSqDist(fromRows(A), fromRows(Bm), [1, 1])).toThrow('scaledSqDist: dimensions differ');
    expect(() => toMat(A, 2)).toThrow('points have dimension 3, expected 2');
    expect(toMat([], 2).rows).toBe(0);
    const M = fromRows(A);
    expect(toMat(M, 3)).toBe(M);
  });

  it('K = s·RBF(X, X) + σ²I + diag(known), exactly symmetric', () => {
    const X = rows(6, 3, 5);
    const hyper = { lengthscales: l, outputscale: 2, noise: 0.01, constant: 0 };
    const known = [0, 0.5, 0, 0, 2, 0];
    for (const kn of [null, known]) {
      const K = kernelMatrix(fromRows(X), hyper, kn);
      for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) {
        const want = 2 * Math.exp(-0.5 * direct(X[i]!, X[j]!, l)) + (i === j ? 0.01 + (kn ? kn[i]! : 0) : 0);
        expect(K.data[i * 6 + j], `${i},${j}`).toBeCloseTo(want, 12);
        expect(K.data[i * 6 + j]).toBe(K.data[j * 6 + i]);
      }
    }
  });

  it('log θ = log s + (d/2) log 2π + Σ log ℓ, finite where θ itself overflows', () => {
    expect(logThetaFromHyper({ lengthscales: [0.5, 2], outputscale: 3 })).toBeCloseTo(Math.log(3 * 2 * Math.PI * 0.5 * 2), 13);
    const big = logThetaFromHyper({ lengthscales: new Array(400).fill(10), outputscale: 1 });
    expect(big).toBeCloseTo(200 * Math.log(2 * Math.PI) + 400 * Math.log(10), 9);
  });
});

describe('the posterior against ml-matrix', () => {
  const X = rows(7, 2, 6);
  const y = X.map(([a, b]) => Math.sin(a!) + b! * b!);
  const hyper = { lengthscales: [0.8, 1.4], outputscale: 1.5, noise: 0.02, constant: 0.3 };
  const Xs = rows(4, 2, 7);
  const k = (a: number[], b: number[]) => hyper.outputscale * Math.exp(-0.5 * direct(a, b, hyper.lengthscales));

  for (const known of [null, [0.1, 0, 0, 0.3, 0, 0, 0]]) {
    it(`mean and covariance${known ? ', with known noise' : ''}`, () => {
      const model = buildModel(fromRows(X), y, hyper, known);
      const K = new Matrix(X.map((a, i) => X.map((b, j) => k(a, b) + (i === j ? hyper.noise + model.jitter + (known ? known[i]! : 0) : 0))));
      const Ki = inverse(K);
      const Kxs = new Matrix(Xs.map((a) => X.map((b) => k(a, b))));
      const mean = Kxs.mmul(Ki).mmul(Matrix.columnVector(y.map((v) => v - hyper.constant))).to1DArray().map((v) => v + hyper.constant);
      const cov = new Matrix(Xs.map((a) => Xs.map((b) => k(a, b)))).sub(Kxs.mmul(Ki).mmul(Kxs.transpose())).to2DArray();
      const p = predict(model, Xs);
      const j = posteriorJoint(model, Xs);
      for (let i = 0; i < 4; i++) {
        expect(p.mean[i]).toBeCloseTo(mean[i]!, 9);
        expect(j.mean[i]).toBeCloseTo(mean[i]!, 9);
        expect(p.variance[i]).toBeCloseTo(Math.max(cov[i]![i]!, 0), 9);
        for (let m = 0; m < 4; m++) {
          expect(j.cov.data[i * 4 + m], `${i},${m}`).toBeCloseTo(cov[i]![m]!, 9);
          expect(j.cov.data[i * 4 + m]).toBe(j.cov.data[m * 4 + i]);
        }
      }
    });
  }

  it('a query at a data point of a noiseless fit: variance clamped at 0, never negative', () => {
    const model = buildModel(fromRows(X), y, { ...hyper, noise: 1e-12 });
    const p = predict(model, X);
    for (const v of p.variance) expect(v).toBeGreaterThanOrEqual(0);
    expect(Math.min(...p.variance)).toBeLessThan(1e-6);
  });

  it('the clamp itself: where Σ V² exceeds the prior variance (rounding; forced here by raising s by 1e-6 after the fit), the variance is 0, not negative', () => {
    const model = buildModel(fromRows(X), y, { ...hyper, noise: 1e-12 });
    const raised = { ...model, hyper: { ...model.hyper, outputscale: model.hyper.outputscale * (1 + 1e-6) } };
    // At a data point the unclamped value is s'(1 − s'/s) ≈ −1e-6·s: below 0 by far more than rounding.
    expect(Array.from(predict(raised, X).variance)).toEqual(X.map(() => 0));
  });
});

describe('Gamma priors', () => {
  it('the defaults: ProbNES ℓ ~ Gamma(d, √d), s ~ Gamma(6, 3), σ² ~ Gamma(1.1, 0.05); BO ℓ ~ Gamma(3, 6), s ~ Gamma(2, 0.15)', () => {
    expect(probnesPriors(4)).toEqual({ lengthscale: { shape: 4, rate: 2 }, outputscale: { shape: 6, rate: 3 }, noise: { shape: 1.1, rate: 0.05 } });
    expect(boPriors()).toEqual({ lengthscale: { shape: 3, rate: 6 }, outputscale: { shape: 2, rate: 0.15 }, noise: { shape: 1.1, rate: 0.05 } });
  });

  it('log Γ at exact values, on both sides of ½ (the reflection branch below it)', () => {
    expect(logGamma(1)).toBeCloseTo(0, 13);
    expect(logGamma(2)).toBeCloseTo(0, 13);
    expect(logGamma(7)).toBeCloseTo(Math.log(720), 12);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 13);
    expect(logGamma(0.25)).toBeCloseTo(Math.log(3.625609908221908), 12);
    expect(logGamma(1.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI) / 2), 13);
  });

  it('the log-density b^a x^(a−1) e^(−bx) / Γ(a), and its derivative by finite differences', () => {
    const p = { shape: 3, rate: 2 };
    // Gamma(3, 2) at 1.5: 2³·1.5²·e⁻³ / 2! = 4·2.25·e⁻³.
    expect(logGammaPdf(1.5, p)).toBeCloseTo(Math.log(9 * Math.exp(-3)), 13);
    for (const x of [0.3, 1, 4]) {
      const h = 1e-6;
      expect(dLogGammaPdf(x, p)).toBeCloseTo((logGammaPdf(x + h, p) - logGammaPdf(x - h, p)) / (2 * h), 6);
    }
  });

  it('the mode (a − 1)/b, or the mean a/b when a ≤ 1', () => {
    expect(gammaMode({ shape: 3, rate: 2 })).toBe(1);
    expect(gammaMode({ shape: 1, rate: 4 })).toBe(0.25);
    expect(gammaMode({ shape: 0.5, rate: 2 })).toBe(0.25);
    // (1.1 − 1)/0.05 = 2 up to the rounding of 1.1 − 1.
    const h = priorModeHyper(probnesPriors(4), 4, 1.5);
    expect({ ...h, noise: 0 }).toEqual({ lengthscales: [1.5, 1.5, 1.5, 1.5], outputscale: 5 / 3, noise: 0, constant: 1.5 });
    expect(h.noise).toBeCloseTo(2, 13);
    // A noise mode below 1e-4 is raised to it.
    expect(priorModeHyper({ ...boPriors(), noise: { shape: 1.1, rate: 1e4 } }, 1, 0).noise).toBe(1e-4);
  });

  it('draws with mean a/b and variance a/b² (20 000 draws, five standard errors), for a ≥ 1 and a < 1', () => {
    const rng = Rng.fromSeed(11);
    // Shape 1 is the boundary of the a < 1 boost (taken below 1 only: at 1 it would give Gamma(2), or
    // Gamma(1)·U), and there the proposal accepted without its test has 1.17 times the variance.
    for (const p of [{ shape: 3, rate: 2 }, { shape: 0.4, rate: 0.5 }, { shape: 1, rate: 1 }]) {
      const n = 20_000;
      const x = Array.from({ length: n }, () => sampleGamma(rng, p));
      const mean = x.reduce((a, b) => a + b, 0) / n;
      const variance = x.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
      const v = p.shape / p.rate ** 2;
      expect(Math.abs(mean - p.shape / p.rate), JSON.stringify(p)).toBeLessThan(5 * Math.sqrt(v / n));
      // The variance of the sample variance is (μ₄ − σ⁴)/n with μ₄ = 3σ⁴(1 + 2/a) for a Gamma.
      expect(Math.abs(variance - v)).toBeLessThan(5 * Math.sqrt((3 * v * v * (1 + 2 / p.shape) - v * v) / n));
      expect(x.every((g) => g > 0)).toBe(true);
    }
    // P(X < a/b) in closed form for integer a (1 − e^(−a) Σ_{k<a} a^k/k!), within five binomial standard errors.
    for (const [p, cdf] of [[{ shape: 3, rate: 2 }, 1 - Math.exp(-3) * (1 + 3 + 4.5)], [{ shape: 1, rate: 1 }, 1 - Math.exp(-1)]] as const) {
      const n = 20_000;
      const below = Array.from({ length: n }, () => sampleGamma(rng, p)).filter((g) => g < p.shape / p.rate).length / n;
      expect(Math.abs(below - cdf), JSON.stringify(p)).toBeLessThan(5 * Math.sqrt((cdf * (1 - cdf)) / n));
    }
  });

  it('hyperparameters drawn from the priors: d lengthscales, the noise at least 2e-4', () => {
    const h = samplePriorHyper({ ...probnesPriors(3), noise: { shape: 1.1, rate: 1e6 } }, 3, 0.7, Rng.fromSeed(3));
    expect(h.lengthscales).toHaveLength(3);
    expect(h.noise).toBe(2e-4);
    expect(h.constant).toBe(0.7);
    expect(h.outputscale).toBeGreaterThan(0);
  });
});

describe('the mixed kernel', () => {
  it('one-hot blocks after the continuous coordinates', () => {
    expect(oneHot([2, 0], [3, 2])).toEqual([0, 0, 1, 1, 0]);
    expect(encodeMixed([0.5, -1, 1, 0], 2, [2, 3])).toEqual([0.5, -1, 0, 1, 1, 0, 0]);
    expect(blockOffsets(2, [3, 2, 4])).toEqual([2, 5, 7]);
    const w = blockWeights([9, 9, 1, 2, 4, 0.5], 2, [3, 1]);
    expect(w.map((a) => [...a])).toEqual([[1, 0.25, 1 / 16], [4]]);
  });

  it('κ(a, b) = 1 on the diagonal, exp(−½(w_a + w_b)) off it; its means as brute-force sums', () => {
    const w = [0.3, 1.2, 2];
    const q = [0.5, 0.2, 0.3];
    expect(overlapKernel(w, 1, 1)).toBe(1);
    expect(overlapKernel(w, 0, 2)).toBeCloseTo(Math.exp(-1.15), 15);
    // The kernel on φ is the RBF's: ‖e_a − e_b‖² weighted by w is w_a + w_b.
    const phi = (a: number) => oneHot([a], [3]);
    expect(overlapKernel(w, 0, 2)).toBeCloseTo(Math.exp(-0.5 * phi(0).reduce((s, v, k) => s + w[k]! * (v - phi(2)[k]!) ** 2, 0)), 15);
    let rho = 0;
    for (let b = 0; b < 3; b++) {
      let tau = 0;
      for (let a = 0; a < 3; a++) tau += q[a]! * (a === b ? 1 : Math.exp(-0.5 * (w[a]! + w[b]!)));
      expect(overlapKernelMean(w, q, b)).toBeCloseTo(tau, 15);
      rho += q[b]! * tau;
    }
    expect(overlapDoubleMean(w, q)).toBeCloseTo(rho, 15);
  });
});
