/**
 * Known per-point noise in the GP (src/engine/gp: `knownNoise`, a reported standard error² added to
 * K's diagonal on top of the learned σ²_n). Expected values come from properties of the Gaussian
 * model, not from the code under test: equal known noise is the same as a larger σ²_n; two
 * observations at one input with noise variances v₁, v₂ are one observation of their
 * precision-weighted mean with variance (1/v₁ + 1/v₂)⁻¹ (the Gaussian product rule); the gradient
 * of the MAP objective against central finite differences, on both routes of the restricted likelihood.
 */
import { describe, expect, it } from 'vitest';
import { basisMatrix, buildModel, fitGp, lowerInverse, logMarginalLikelihood, logPrior, packHyper, predict, probnesPriors, remlObjectiveEvaluator, restrictedLogLikelihood, toMat, type GpHyper } from '../../src/engine/gp/index.js';
import { mapObjectiveEvaluator } from '../../src/engine/gp/mll.js';
import { cholesky, fromRows } from '../../src/engine/linalg/index.js';
import { Rng } from '../../src/engine/random/index.js';

const d = 2;
const hyper: GpHyper = { lengthscales: [0.8, 1.3], outputscale: 1.5, noise: 0.01, constant: 0.2 };
function data(n: number, seed: number) {
  const rng = Rng.fromSeed(seed);
  const U = Array.from({ length: n }, () => [2 * rng.uniform() - 1, 2 * rng.uniform() - 1]);
  const y = U.map((u) => Math.sin(2 * u[0]) + u[1] * u[1] + 0.1 * rng.normal());
  const known = U.map(() => 0.05 * rng.uniform());
  return { X: toMat(U), U, y, known };
}

describe('known per-point noise', () => {
  it('equal known noise c is the GP with σ²_n + c (likelihood and prediction)', () => {
    const { X, y } = data(12, 1);
    const c = 0.03;
    const a = logMarginalLikelihood(X, y, hyper, false, new Array(12).fill(c));
    const b = logMarginalLikelihood(X, y, { ...hyper, noise: hyper.noise + c }, false);
    expect(Math.abs(a.value - b.value)).toBeLessThan(1e-12 * Math.abs(b.value));
    const pa = predict(buildModel(X, y, hyper, new Array(12).fill(c)), [[0.1, 0.2]]);
    const pb = predict(buildModel(X, y, { ...hyper, noise: hyper.noise + c }), [[0.1, 0.2]]);
    expect(pa.mean[0]).toBeCloseTo(pb.mean[0], 12);
    expect(pa.variance[0]).toBeCloseTo(pb.variance[0], 12);
  });

  it('two observations at one input are one observation of their precision-weighted mean (Gaussian product rule)', () => {
    const { U, y } = data(6, 2);
    const x0 = [0.3, -0.4], y1 = 1.2, y2 = 0.4, k1 = 0.02, k2 = 0.08;
    const v1 = hyper.noise + k1, v2 = hyper.noise + k2; // total noise of each observation
    const two = buildModel(toMat([...U, x0, x0]), [...y, y1, y2], hyper, [0, 0, 0, 0, 0, 0, k1, k2]);
    const vm = 1 / (1 / v1 + 1 / v2), ym = vm * (y1 / v1 + y2 / v2);
    // One observation of ym with total noise vm: known part vm − σ²_n.
    const one = buildModel(toMat([...U, x0]), [...y, ym], hyper, [0, 0, 0, 0, 0, 0, vm - hyper.noise]);
    const at = [[0.3, -0.4], [0.9, 0.1], [-0.5, 0.5]];
    const p2 = predict(two, at), p1 = predict(one, at);
    for (let i = 0; i < at.length; i++) {
      expect(p2.mean[i]).toBeCloseTo(p1.mean[i], 9);
      expect(p2.variance[i]).toBeCloseTo(p1.variance[i], 9);
    }
    expect(two.knownNoise).toEqual([0, 0, 0, 0, 0, 0, k1, k2]);
  });

  it('a point with a huge known noise no longer informs the prediction', () => {
    const { U, y } = data(8, 3);
    const with_ = buildModel(toMat([...U, [0, 0]]), [...y, 50], hyper, [...new Array(8).fill(0), 1e12]);
    const without = buildModel(toMat(U), y, hyper);
    const p = predict(with_, [[0, 0]]), q = predict(without, [[0, 0]]);
    expect(p.mean[0]).toBeCloseTo(q.mean[0], 8);
    expect(p.variance[0]).toBeCloseTo(q.variance[0], 8);
  });

  it('the MAP objective\'s gradient equals central finite differences: constant mean and both REML routes', () => {
    const { X, y, known } = data(25, 4);
    const W = lowerInverse(cholesky(fromRows([[1, 0.3], [0.3, 0.8]])).L);
    const H = basisMatrix('full', X, [0.1, -0.2], W);
    const evs = [
      mapObjectiveEvaluator(X, y, probnesPriors(d), known),
      remlObjectiveEvaluator(X, y, H, probnesPriors(d), 'gls', known),
      remlObjectiveEvaluator(X, y, H, probnesPriors(d), 'contrast', known),
    ];
    const phi = packHyper(hyper);
    for (const ev of evs) {
      ev.value(phi);
      const g = ev.gradient();
      const h = 1e-5;
      for (let k = 0; k < d + 2; k++) {
        const up = Float64Array.from(phi), dn = Float64Array.from(phi);
        up[k] += h;
        dn[k] -= h;
        const fd = (ev.value(up) - ev.value(dn)) / (2 * h);
        expect(Math.abs(fd - g[k])).toBeLessThan(1e-6 * Math.max(1, Math.abs(g[k])));
      }
    }
    // The two routes are the same function with known noise too (Harville 1974).
    const a = evs[1].value(phi), b = evs[2].value(phi);
    expect(Math.abs(a - b)).toBeLessThan(1e-9 * Math.abs(a));
    // And the evaluator's objective is (ℓ_R + log priors)/n with ℓ_R of the fixed-hyperparameter function.
    const ell = restrictedLogLikelihood(X, y, H, hyper, known);
    expect(Math.abs(a * 25 - logPrior(hyper, probnesPriors(d)).value - ell)).toBeLessThan(1e-9 * Math.abs(ell));
    expect(Math.abs(ell - restrictedLogLikelihood(X, y, H, hyper))).toBeGreaterThan(1e-3); // the known noise changes ℓ_R
  });

  it('fitGp with known noise: the fitted σ²_n drops by the reported variance when the reported part explains the noise', () => {
    // y = f + ε, ε ~ N(0, 0.04) reported exactly: the learned σ²_n need not absorb it.
    const rng = Rng.fromSeed(5);
    const U = Array.from({ length: 40 }, () => [2 * rng.uniform() - 1, 2 * rng.uniform() - 1]);
    const y = U.map((u) => Math.sin(2 * u[0]) + 0.2 * rng.normal());
    const plain = fitGp(U, y, { priors: probnesPriors(d) });
    const told = fitGp(U, y, { priors: probnesPriors(d), knownNoise: new Array(40).fill(0.04) });
    expect(plain.model.hyper.noise).toBeGreaterThan(0.01);
    expect(told.model.hyper.noise).toBeLessThan(plain.model.hyper.noise);
    expect(told.model.knownNoise).toHaveLength(40);
    expect(plain.model.knownNoise).toBeUndefined();
    expect(() => fitGp(U, y, { priors: probnesPriors(d), knownNoise: [1] })).toThrow(/known noise/);
    expect(() => fitGp(U, y, { priors: probnesPriors(d), knownNoise: new Array(40).fill(-1) })).toThrow(/known noise/);
  });
});
