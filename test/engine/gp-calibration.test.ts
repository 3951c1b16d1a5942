/**
 * The leave-one-out scale of a fitted GP (src/engine/gp/calibration.ts). Expected values: brute-force
 * leave-one-out (refitting without each point at fixed hyperparameters, R&W 2006 eq. 2.23–2.24 with
 * the noise added to the held-out variance), and Monte Carlo: targets drawn from a GP whose covariance
 * is c² times the model's give a scale near c (the tolerance is justified below).
 */
import { describe, expect, it } from 'vitest';
import { looScale } from '../../src/engine/gp/calibration.js';
import { buildModel, kernelMatrix, predict, toMat, type GpHyper } from '../../src/engine/gp/index.js';
import { cholesky } from '../../src/engine/linalg/index.js';
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
