/**
 * The leave-one-out scale of a fitted GP (src/engine/gp/calibration.ts). Expected values: brute-force
 * leave-one-out (refitting without each point at fixed hyperparameters, R&W 2006 eq. 2.23–2.24 with
 * the noise added to the held-out variance), and Monte Carlo: targets drawn from a GP whose covariance
 * is c² times the model's give a scale near c (the tolerance is justified below); the basis
 * coefficients' variance against the GP whose kernel has the basis with a Gaussian prior N(0, b·I) on β,
 * as b grows (R&W 2006 §2.7: eq. 2.42 is that limit); the optimism correction of a chosen point against a
 * hand computation and, for its unbiasedness and scale, residuals drawn from its own model.
 */
import { describe, expect, it } from 'vitest';
import { SURPRISE_MIN, basisVariance, correctForSurprise, looScale, surpriseCorrection, type Surprise } from '../../src/engine/gp/calibration.js';
import { basisMatrix, buildBasisModel, buildModel, kernelMatrix, predict, rbfCross, toMat, type GpHyper } from '../../src/engine/gp/index.js';
import { cholesky, cholSolve, fromRows } from '../../src/engine/linalg/index.js';
import { Rng } from '../../src/engine/random/index.js';

const hyper: GpHyper = { lengthscales: [0.7, 1.1], outputscale: 1.2, noise: 0.05, constant: 0 };
const pointsOf = (n: number, rng: Rng) => Array.from({ length: n }, () => [2 * rng.uniform() - 1, 2 * rng.uniform() - 1]);

describe('leave-one-out scale', () => {
  it('equals the root mean squared standardised residual of brute-force leave-one-out', () => {
    const rng = Rng.fromSeed(1);
    const U = pointsOf(15, rng);
    const y = U.map((u) => Math.sin(3 * u[0]) * u[1] + 0.2 * rng.normal());
    let s = 0;
    for (let i = 0; i < U.length; i++) {
      const m = buildModel(toMat(U.filter((_, j) => j !== i)), y.filter((_, j) => j !== i), hyper);
      const p = predict(m, [U[i]]);
      s += (y[i] - p.mean[0]) ** 2 / (p.variance[0] + hyper.noise); // the held-out y's variance: latent + noise
    }
    expect(looScale(buildModel(toMat(U), y, hyper))).toBeCloseTo(Math.sqrt(s / U.length), 10);
  });

  it('recovers the factor c of targets drawn from c²·K (Monte Carlo)', () => {
    // n = 200 draws: ĉ² is a mean of n correlated χ²₁ terms. Measured over 40 other seeds (100–139) at
    // c = 1: ĉ has mean 1.001, standard deviation 0.056, range 0.89–1.14; so 0.2 is 3.5 standard
    // deviations (and ĉ/c does not depend on c: the residuals scale with c).
    const rng = Rng.fromSeed(2);
    const U = pointsOf(200, rng);
    const X = toMat(U);
    const L = cholesky(kernelMatrix(X, hyper)).L;
    for (const c of [1, 3, 0.3]) {
      const z = Array.from({ length: 200 }, () => rng.normal());
      const y = U.map((_, i) => c * z.reduce((acc, zj, j) => acc + (j <= i ? L.data[i * 200 + j] * zj : 0), 0));
      const est = looScale(buildModel(X, y, hyper));
      expect(Math.abs(est / c - 1), `c = ${c}`).toBeLessThan(0.2);
    }
  });
});

describe('with a basis mean (β estimated by GLS)', () => {
  const rng = Rng.fromSeed(3);
  const U = pointsOf(14, rng);
  const X = toMat(U);
  const y = U.map((u) => 1 + u[0] - 2 * u[1] * u[1] + 0.5 * u[0] * u[1] + 0.1 * Math.sin(5 * u[0]) + 0.05 * rng.normal());
  const I = fromRows([[1, 0], [0, 1]]);
  const H = basisMatrix('full', X, [0, 0], I);
  const h0 = { ...hyper, constant: 0 };

  it('the coefficients\' variance is the large-prior limit of the GP with the basis in its kernel (R&W eq. 2.42)', () => {
    const { model } = buildBasisModel(X, y, H, h0);
    const at = [[0.2, -0.3], [0.9, 0.9], [1.5, -1.2]];
    const Xs = toMat(at), Hs = basisMatrix('full', Xs, [0, 0], I);
    const extra = basisVariance(model, H, Xs, Hs);
    const residual = predict(model, at).variance;
    // k_b(x, x') = k(x, x') + b·h(x)ᵀh(x'): its plain posterior variance, minus the residual GP's.
    const b = 1e5, n = U.length, p = H.cols;
    const K = kernelMatrix(X, h0);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      let s = 0;
      for (let a = 0; a < p; a++) s += H.data[i * p + a] * H.data[j * p + a];
      K.data[i * n + j] += b * s;
    }
    const L = cholesky(K).L;
    const ks = rbfCross(X, Xs, h0);
    at.forEach((_, j) => {
      const kb = Float64Array.from({ length: n }, (_, i) => {
        let s = 0;
        for (let a = 0; a < p; a++) s += H.data[i * p + a] * Hs.data[j * p + a];
        return ks.data[i * at.length + j] + b * s;
      });
      let hh = 0;
      for (let a = 0; a < p; a++) hh += Hs.data[j * p + a] ** 2;
      const v = cholSolve(L, kb);
      const post = h0.outputscale + b * hh - kb.reduce((s, kv, i) => s + kv * v[i], 0);
      // The limit is approached as O(1/b); the cancellation of b·hh costs ~1e−16·b·hh absolute.
      expect(Math.abs(post - residual[j] - extra[j]) / extra[j], `point ${j}`).toBeLessThan(1e-3);
    });
    expect(extra.every((v) => v > 0)).toBe(true);
  });

  it('the leave-one-out scale re-estimates β without each point (brute force)', () => {
    const { model } = buildBasisModel(X, y, H, h0);
    let s = 0;
    for (let i = 0; i < U.length; i++) {
      const keep = U.map((_, j) => j).filter((j) => j !== i);
      const Xi = toMat(keep.map((j) => U[j])), Hi = basisMatrix('full', Xi, [0, 0], I);
      const fit = buildBasisModel(Xi, keep.map((j) => y[j]), Hi, h0);
      const xs = toMat([U[i]]), hs = basisMatrix('full', xs, [0, 0], I);
      let mean = predict(fit.model, [U[i]]).mean[0];
      for (let a = 0; a < H.cols; a++) mean += hs.data[a] * fit.beta[a];
      const v = predict(fit.model, [U[i]]).variance[0] + basisVariance(fit.model, Hi, xs, hs)[0] + h0.noise;
      s += (y[i] - mean) ** 2 / v;
    }
    const expected = Math.sqrt(s / U.length);
    expect(looScale(model, H)).toBeCloseTo(expected, 8);
    // Holding β fixed understates the residuals: about √((n − p)/n) of the GLS-aware value here.
    expect(looScale(model)).toBeLessThan(expected);
  });
});

describe('the optimism of a chosen point (residuals of earlier chosen points)', () => {
  it('κ̂ = Σwrσ/Σwσ², c² = max(1, Σw(r − κ̂σ)²/(m − 1)), Var κ̂ = c²/Σwσ² (by hand)', () => {
    // w = 1, 1/4, 1/2: Σwσ² = 2.5, Σwrσ = 5.5, κ̂ = 2.2; Σw(r − κ̂σ)² = 0.04 + 0.04 + 0.32 = 0.4, /2 = 0.2 → c² = 1.
    const res: Surprise[] = [{ r: 2, sd: 1, noise: 0 }, { r: 4, sd: 2, noise: 0 }, { r: 3, sd: 1, noise: 1 }];
    const c = surpriseCorrection(res)!;
    expect(c.kappa).toBeCloseTo(2.2, 14);
    expect(c.scale2).toBe(1);
    expect(c.kappaVar).toBeCloseTo(0.4, 14);
    const e = correctForSurprise(10, 0.5, res);
    expect(e.predicted).toBeCloseTo(10 + 2.2 * 0.5, 14);
    expect(e.sd).toBeCloseTo(0.5 * Math.sqrt(1.4), 14);
  });

  it('with fewer than SURPRISE_MIN usable residuals the prediction is unchanged', () => {
    const two: Surprise[] = [{ r: 2, sd: 1, noise: 0 }, { r: 4, sd: 2, noise: 0 }, { r: 1, sd: 0, noise: 1 }, { r: NaN, sd: 1, noise: 1 }];
    expect(SURPRISE_MIN).toBe(3);
    expect(surpriseCorrection(two)).toBeNull();
    expect(correctForSurprise(10, 0.5, two)).toEqual({ predicted: 10, sd: 0.5 });
  });

  it('recovers κ and c of residuals drawn from its model r = κσ + N(0, c²(σ² + s²)) (Monte Carlo)', () => {
    // 2000 sets of m = 5 residuals with κ = 1.3, c = 1: κ̂ is the weighted least-squares estimate, unbiased,
    // with variance c²/Σwσ² per set; its mean over the sets must lie within 4 standard errors of κ.
    // One set of m = 400 with c = 2: c² is a mean of 399 squared standardised residuals, relative sd
    // √(2/399) ≈ 0.07, so within 25% of 4.
    const rng = Rng.fromSeed(11);
    const draw = (m: number, kappa: number, c: number): Surprise[] =>
      Array.from({ length: m }, () => {
        const sd = 0.2 + 2 * rng.uniform(), noise = 2 * rng.uniform();
        return { r: kappa * sd + c * Math.sqrt(sd * sd + noise * noise) * rng.normal(), sd, noise };
      });
    let sum = 0, varSum = 0;
    const sets = 2000;
    for (let k = 0; k < sets; k++) {
      const res = draw(5, 1.3, 1);
      const c = surpriseCorrection(res)!;
      sum += c.kappa;
      varSum += c.kappaVar / c.scale2; // 1/Σwσ², the variance of κ̂ at c = 1
    }
    expect(Math.abs(sum / sets - 1.3)).toBeLessThan(4 * Math.sqrt(varSum / sets / sets));
    const big = surpriseCorrection(draw(400, 0.5, 2))!;
    expect(big.scale2).toBeGreaterThan(0.75 * 4);
    expect(big.scale2).toBeLessThan(1.25 * 4);
  });
});
