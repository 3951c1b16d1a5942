/**
 * The moderate-noise BBOB functions f101–f106 (src/engine/benchmarks/bbob/noisy.ts) against their
 * definitions in RR-6869: the noise-free parts worked from the formulas, and each noise model's
 * distribution checked by Monte Carlo against moments derived from its formula (tolerances: 5
 * standard errors of the Monte Carlo estimate, so a correct implementation fails with probability
 * below 10⁻⁶ per check; the draws are seeded, so the test is deterministic).
 */
import { describe, expect, it } from 'vitest';
import { bbobNoisyProblem, NOISY_FUNCTIONS } from '../../src/engine/benchmarks/bbob.js';
import { cauchyNoise, gaussianNoise, uniformNoise } from '../../src/engine/benchmarks/bbob/noisy.js';
import { bbobFopt, bbobXopt } from '../../src/engine/benchmarks/bbob/instances.js';
import { Rng } from '../../src/engine/random/index.js';

const N = 20000;
const meanSd = (xs: number[]) => {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  const v = xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
  return { m, sd: Math.sqrt(v) };
};

describe('noise-free parts (RR-6869 definitions)', () => {
  it('f101–f103: ‖x − x_opt‖² + f_opt, x_opt and f_opt from the function\'s own seed (fn + 10000·instance)', () => {
    for (const fn of [101, 102, 103]) {
      const p = bbobNoisyProblem(fn, 3, 2);
      const xopt = bbobXopt(3, fn + 20000);
      expect(p.argmin).toEqual(xopt);
      expect(p.optimum).toBe(bbobFopt(fn, 2));
      const x = [0.5, -1, 2];
      const sq = x.reduce((s, v, i) => s + (v - xopt[i]) ** 2, 0);
      expect(p.fTrue(x)).toBeCloseTo(sq + p.optimum, 10);
      // At x_opt the noise-free value is below 10⁻⁸, so every model returns it undisturbed.
      expect(p.f(p.argmin)).toBe(p.optimum);
    }
  });

  it('f104–f106: Rosenbrock with z = max(1, √D/8)(x − x_opt) + 1 and x_opt = 0.75 × the drawn one', () => {
    const d = 2;
    for (const fn of [104, 105, 106]) {
      const p = bbobNoisyProblem(fn, d, 1);
      const xopt = bbobXopt(d, fn + 10000).map((v) => 0.75 * v);
      p.argmin.forEach((v, i) => expect(v).toBeCloseTo(xopt[i], 15));
      const x = [1, -2];
      const z = x.map((v, i) => v - xopt[i] + 1); // max(1, √2/8) = 1
      const rosen = 100 * (z[0] ** 2 - z[1]) ** 2 + (z[0] - 1) ** 2;
      expect(p.fTrue(x)).toBeCloseTo(rosen + p.optimum, 8);
      expect(p.f(p.argmin)).toBe(p.optimum);
    }
  });

  it('the noisy suite\'s penalty 100·Σ max(0, |x_i| − 5)² outside [−5, 5]^D, not subject to noise', () => {
    const p = bbobNoisyProblem(101, 2, 1);
    const x = [7, -5.5];
    const sq = x.reduce((s, v, i) => s + (v - p.argmin[i]) ** 2, 0);
    expect(p.fTrue(x)).toBeCloseTo(sq + 100 * (4 + 0.25) + p.optimum, 9);
  });

  it('the noise is reproducible from its seed and differs between seeds', () => {
    const x = [1, 1];
    const a = bbobNoisyProblem(101, 2, 1, 7), b = bbobNoisyProblem(101, 2, 1, 7), c = bbobNoisyProblem(101, 2, 1, 8);
    const va = [a.f(x), a.f(x)], vb = [b.f(x), b.f(x)];
    expect(va).toEqual(vb);
    expect(va[0]).not.toBe(va[1]);
    expect(c.f(x)).not.toBe(va[0]);
    expect(NOISY_FUNCTIONS).toEqual([101, 102, 103, 104, 105, 106]);
    expect(() => bbobNoisyProblem(107, 2)).toThrow(RangeError);
  });
});

describe('noise models against their formulas (Monte Carlo)', () => {
  it('f_GN(f, 0.01): ln((v − 1.01e−8)/f) ~ N(0, 0.01²)', () => {
    const rng = Rng.fromSeed(1), f = 4;
    const logs = Array.from({ length: N }, () => Math.log((gaussianNoise(f, 0.01, rng) - 1.01e-8) / f));
    const { m, sd } = meanSd(logs);
    expect(Math.abs(m)).toBeLessThan((5 * 0.01) / Math.sqrt(N));
    // The sample sd of N normals has standard error ≈ σ/√(2N).
    expect(Math.abs(sd - 0.01)).toBeLessThan((5 * 0.01) / Math.sqrt(2 * N));
  });

  it('f_UN(f, α, β): ln((v − 1.01e−8)/f) = β ln U + max(0, α U\' ln(10⁹/f)), mean −β + α ln(10⁹/f)/2, variance β² + (α ln(10⁹/f))²/12', () => {
    const rng = Rng.fromSeed(2), f = 0.5, d = 5;
    const alpha = 0.01 * (0.49 + 1 / d), beta = 0.01;
    const L = Math.log(1e9 / f); // > 0: the max(1, ·) never binds for f < 10⁹
    const logs = Array.from({ length: N }, () => Math.log((uniformNoise(f, alpha, beta, rng) - 1.01e-8) / f));
    const { m, sd } = meanSd(logs);
    const variance = beta ** 2 + (alpha * L) ** 2 / 12;
    expect(Math.abs(m - (-beta + (alpha * L) / 2))).toBeLessThan(5 * Math.sqrt(variance / N));
    // Var(β ln U) = β² (ln U is −Exp(1)), Var(α U' L) = (αL)²/12, independent.
    expect(Math.abs(sd - Math.sqrt(variance)) / Math.sqrt(variance)).toBeLessThan(0.05);
    // f ≥ 10⁹: the second factor is 1, so the noise only shrinks f.
    expect(uniformNoise(2e9, alpha, beta, rng)).toBeLessThanOrEqual(2e9 + 1.01e-8);
  });

  it('f_CN(f, 0.01, 0.05): v = f + 10 + 1.01e−8 except for a share p = 0.05 of Cauchy outliers (cut from below at f)', () => {
    const rng = Rng.fromSeed(3), f = 2;
    const v = Array.from({ length: N }, () => cauchyNoise(f, 0.01, 0.05, rng) - f - 1.01e-8);
    const outliers = v.filter((e) => Math.abs(e - 10) > 1e-9);
    const share = outliers.length / N;
    expect(Math.abs(share - 0.05)).toBeLessThan(5 * Math.sqrt((0.05 * 0.95) / N));
    expect(Math.min(...v)).toBeGreaterThanOrEqual(-1e-9); // α·max(0, …) ≥ 0
    // The outliers are 0.01·(1000 + C), C standard Cauchy: their median is 10 (C's median 0), about half above.
    const above = outliers.filter((e) => e > 10).length / outliers.length;
    expect(Math.abs(above - 0.5)).toBeLessThan(5 * Math.sqrt(0.25 / outliers.length));
  });

  it('every model returns f itself below 10⁻⁸', () => {
    const rng = Rng.fromSeed(4);
    for (const f of [0, 5e-9]) {
      expect(gaussianNoise(f, 1, rng)).toBe(f);
      expect(uniformNoise(f, 1, 1, rng)).toBe(f);
      expect(cauchyNoise(f, 1, 1, rng)).toBe(f);
    }
  });
});

describe('the noise\'s standard deviation (what a replicating user would report)', () => {
  it('matches the sample standard deviation of the noisy values (Gaussian, uniform); null for Cauchy', () => {
    for (const fn of [101, 102, 104, 105]) {
      const p = bbobNoisyProblem(fn, 5, 1, 11);
      const x = p.argmin.map((v, i) => v + 0.3 * (i + 1));
      const v = Array.from({ length: N }, () => p.f(x));
      const { sd } = meanSd(v);
      const s = p.noiseStd(x)!;
      // The sample sd's relative standard error is ≈ √((κ − 1)/(4N)) (κ the kurtosis, ≤ 3.5 here): < 0.01; allow 5%.
      expect(Math.abs(sd - s) / s, `f${fn}`).toBeLessThan(0.05);
    }
    expect(bbobNoisyProblem(103, 2, 1).noiseStd([1, 1])).toBeNull();
    expect(bbobNoisyProblem(101, 2, 1).noiseStd(bbobNoisyProblem(101, 2, 1).argmin)).toBe(0);
  });
});

describe('the centre of the noisy value (what a model of the observations estimates)', () => {
  it('is the sample mean (Gaussian, uniform) and the sample median (Cauchy)', () => {
    for (const fn of [101, 102, 103, 104, 105, 106]) {
      const p = bbobNoisyProblem(fn, 5, 2, 13);
      const x = p.argmin.map((v, i) => v - 0.2 * (i + 1));
      const v = Array.from({ length: N }, () => p.f(x));
      const c = p.fCentre(x);
      if (fn === 103 || fn === 106) {
        const sorted = [...v].sort((a, b) => a - b);
        // 95% of the draws are exactly f + 10 + 1.01e−8: the median is one of them.
        expect(sorted[N >> 1], `f${fn}`).toBeCloseTo(c, 9);
      } else {
        const { m } = meanSd(v);
        // 5 standard errors of the mean (the noise's sd from noiseStd, itself checked above).
        expect(Math.abs(m - c), `f${fn}`).toBeLessThan((5 * p.noiseStd(x)!) / Math.sqrt(N));
      }
    }
  });
});
