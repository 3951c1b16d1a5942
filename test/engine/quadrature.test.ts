import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { type GpModel, buildModel, fitGp, probnesPriors, toMat } from '../../src/engine/gp/index.js';
import { type Mat, cholesky, cholInverseSym, cholSolve, fromRows } from '../../src/engine/linalg/index.js';
import { bqIntegral, expectedGradient, integralPriorVariance, kernelMeans, prepareBatchSelection, sampledGradient } from '../../src/engine/quadrature/index.js';
import { Rng } from '../../src/engine/random/index.js';

/** Monte Carlo tolerance: |closed form − MC| ≤ K_SE standard errors (+ 1e-12 for exact zeros). */
const K_SE = 5;

interface Setup {
  d: number;
  model: GpModel;
  mean: number[];
  cov: number[][];
}

/** A GP fitted (MAP, ProbNES priors) to 25 random points of a smooth test function, and a random ν. */
function setup(d: number, seed: number): Setup {
  const rng = Rng.fromSeed(seed);
  const X = Array.from({ length: 25 }, () => Array.from(rng.normals(d), (v) => 1.2 * v));
  const raw = X.map((x) => x.reduce((a, v, i) => a + Math.sin(1.5 * v + i) + 0.2 * v * v, 0));
  const m = raw.reduce((a, b) => a + b, 0) / raw.length;
  const sd = Math.sqrt(raw.reduce((a, b) => a + (b - m) ** 2, 0) / (raw.length - 1));
  const { model } = fitGp(X, raw.map((v) => (v - m) / sd), { priors: probnesPriors(d) });
  const A = Array.from({ length: d }, () => Array.from(rng.normals(d), (v) => (0.4 * v) / Math.sqrt(d)));
  const cov = A.map((ai, i) => A.map((aj, j) => ai.reduce((s, v, k) => s + v * aj[k], 0) + (i === j ? 0.3 : 0)));
  const mean = Array.from(rng.normals(d), (v) => 0.3 * v);
  return { d, model, mean, cov };
}

class Acc {
  sum: Float64Array;
  sq: Float64Array;
  constructor(n: number) {
    this.sum = new Float64Array(n);
    this.sq = new Float64Array(n);
  }
  add(i: number, v: number) {
    this.sum[i] += v;
    this.sq[i] += v * v;
  }
  mean(i: number, N: number) {
    return this.sum[i] / N;
  }
  se(i: number, N: number) {
    const m = this.sum[i] / N;
    return Math.sqrt(Math.max(this.sq[i] / N - m * m, 0) / N);
  }
}

function expectMc(closed: number, acc: Acc, i: number, N: number) {
  expect(Math.abs(closed - acc.mean(i, N))).toBeLessThanOrEqual(K_SE * acc.se(i, N) + 1e-12);
}

/**
 * 10⁶ draws x ~ ν of: k(x, u_j) (→ t_j), m_post(x) (→ E[g]), and the score-function forms
 * (m_post(x) − b) Σ⁻¹(x − μ) (→ g_μ) and (m_post(x) − b)·½(Σ⁻¹rrᵀΣ⁻¹ − Σ⁻¹) (→ G), where the
 * baseline b is a constant (the closed-form E[g]) that leaves the expectations unchanged and only
 * reduces the variance, since E[Σ⁻¹(x − μ)] = 0 and E[Σ⁻¹rrᵀΣ⁻¹ − Σ⁻¹] = 0.
 */
function monteCarlo(s: Setup, N: number, baseline: number, rng: Rng) {
  const { d, model } = s, n = model.X.rows, h = model.hyper, X = model.X.data;
  const L = cholesky(fromRows(s.cov)).L.data, Ci = cholInverseSym(cholesky(fromRows(s.cov)).L).data;
  const il2 = h.lengthscales.map((l) => 1 / (l * l));
  const t = new Acc(n), f = new Acc(1), g = new Acc(d), G = new Acc(d * d), R = new Acc(1);
  const x = new Float64Array(d), x2 = new Float64Array(d), e = new Float64Array(2 * d), p = new Float64Array(d);
  // Hot loop written flat (no closures, no allocation): 10⁶ draws must take seconds, not minutes.
  for (let it = 0; it < N; it++) {
    rng.fillNormal(e); // e[0..d) for x, e[d..2d) for the independent x' of the R pair
    for (let i = 0; i < d; i++) {
      let a = s.mean[i], b = s.mean[i];
      for (let k = 0; k <= i; k++) {
        a += L[i * d + k] * e[k];
        b += L[i * d + k] * e[d + k];
      }
      x[i] = a;
      x2[i] = b;
    }
    let m = h.constant;
    for (let j = 0; j < n; j++) {
      let r = 0;
      for (let k = 0; k < d; k++) r += (x[k] - X[j * d + k]) ** 2 * il2[k];
      const kj = h.outputscale * Math.exp(-0.5 * r);
      t.sum[j] += kj;
      t.sq[j] += kj * kj;
      m += model.alpha[j] * kj;
    }
    f.add(0, m);
    let r2 = 0;
    for (let k = 0; k < d; k++) r2 += (x[k] - x2[k]) ** 2 * il2[k];
    R.add(0, h.outputscale * Math.exp(-0.5 * r2));
    for (let i = d - 1; i >= 0; i--) {
      // p = Σ⁻¹(x − μ) = L⁻ᵀ ε (back substitution)
      let v = e[i];
      for (let k = i + 1; k < d; k++) v -= L[k * d + i] * p[k];
      p[i] = v / L[i * d + i];
    }
    const w = m - baseline;
    for (let a = 0; a < d; a++) {
      const ga = w * p[a];
      g.sum[a] += ga;
      g.sq[a] += ga * ga;
      for (let b = a; b < d; b++) {
        const v = 0.5 * w * (p[a] * p[b] - Ci[a * d + b]);
        G.sum[a * d + b] += v;
        G.sq[a * d + b] += v * v;
      }
    }
  }
  return { t, f, g, G, R };
}

describe.each([
  [1, 101],
  [2, 102],
  [5, 105],
  [10, 110],
])('BQ closed forms in d = %i', (d, seed) => {
  const s = setup(d, seed);

  it(`t, E[g], R, g_μ and G agree with Monte Carlo over 10⁶ draws from ν within ${K_SE} standard errors`, () => {
    const N = 1_000_000;
    const bq = bqIntegral(s.model, s.mean, s.cov);
    const eg = expectedGradient(s.model, s.mean, s.cov);
    const mc = monteCarlo(s, N, bq.mean, Rng.fromSeed(seed + 1000));
    bq.t.forEach((tj, j) => expectMc(tj, mc.t, j, N));
    expectMc(bq.mean, mc.f, 0, N);
    expectMc(bq.priorVariance, mc.R, 0, N);
    for (let a = 0; a < d; a++) {
      expectMc(eg.gradMean[a], mc.g, a, N);
      for (let b = a; b < d; b++) expectMc(eg.gradCov.data[a * d + b], mc.G, a * d + b, N);
    }
    expect(eg.integralMean).toBeCloseTo(bq.mean, 14);
    expect(bq.variance).toBeGreaterThanOrEqual(0);
    expect(bq.variance).toBeLessThanOrEqual(bq.priorVariance);
  });

  it('g_μ and G equal central finite differences of E[g] in μ and in Σ (symmetric perturbations)', () => {
    const eg = expectedGradient(s.model, s.mean, s.cov);
    const E = (mu: number[], cov: number[][]) => bqIntegral(s.model, mu, cov).mean;
    const h = 1e-5;
    const scale = Math.max(...eg.gradMean.map(Math.abs), ...eg.gradCov.data.map(Math.abs));
    const tol = 1e-6 * scale; // O(h²) truncation ≈ 1e-10, rounding ≈ 1e-16/h ≈ 1e-11
    for (let a = 0; a < d; a++) {
      const up = s.mean.slice(), dn = s.mean.slice();
      up[a] += h;
      dn[a] -= h;
      expect(Math.abs((E(up, s.cov) - E(dn, s.cov)) / (2 * h) - eg.gradMean[a])).toBeLessThan(tol);
      for (let b = a; b < d; b++) {
        const cu = s.cov.map((r) => r.slice()), cd = s.cov.map((r) => r.slice());
        cu[a][b] += h; cd[a][b] -= h;
        if (a !== b) { cu[b][a] += h; cd[b][a] -= h; }
        const fd = (E(s.mean, cu) - E(s.mean, cd)) / (2 * h);
        const G = eg.gradCov.data;
        const expected = a === b ? G[a * d + a] : G[a * d + b] + G[b * d + a];
        expect(Math.abs(fd - expected)).toBeLessThan(tol);
      }
    }
  });

  it('the Schur-form batch score equals τ̄ᵀK̄⁻¹τ̄ by a full Cholesky, and R − a(B) is the posterior variance with B observed', () => {
    const rng = Rng.fromSeed(seed + 7);
    const pending = [Array.from(rng.normals(d), (v) => v * 0.5)];
    const sel = prepareBatchSelection(s.model, s.mean, s.cov, pending);
    const batch = Array.from({ length: 3 }, () => Array.from(rng.normals(d)));
    const U = [...toRowsOf(s.model.X), ...pending, ...batch];
    const direct = directScore(s.model, U, s.mean, s.cov);
    expect(Math.abs(sel.score(batch) - direct)).toBeLessThan(1e-9 * Math.abs(direct) + 1e-14);
    // Independent route: a GP with the same hyperparameters that has observed Ū (any y values).
    const withB = buildModel(toMat(U), new Float64Array(U.length), s.model.hyper);
    const V = bqIntegral(withB, s.mean, s.cov).variance;
    expect(Math.abs(sel.priorVariance - sel.score(batch) - V)).toBeLessThan(1e-9 * sel.priorVariance);
    expect(sel.score(batch)).toBeGreaterThanOrEqual(sel.base - 1e-15);
  });
});

function toRowsOf(M: Mat): number[][] {
  return Array.from({ length: M.rows }, (_, i) => Array.from(M.data.subarray(i * M.cols, (i + 1) * M.cols)));
}

/** a(B) = τ̄ᵀ K̄⁻¹ τ̄ over Ū with K̄ = s·RBF + σ²I, by one full Cholesky (no Schur shortcut). */
function directScore(model: GpModel, U: number[][], mean: number[], cov: number[][]): number {
  const h = model.hyper;
  const K = fromRows(U.map((a, i) => U.map((b, j) => h.outputscale * Math.exp(-0.5 * a.reduce((s, v, k) => s + ((v - b[k]) / h.lengthscales[k]) ** 2, 0)) + (i === j ? h.noise : 0))));
  const tau = kernelMeans(h, U, mean, cov);
  const v = cholSolve(cholesky(K).L, tau);
  return tau.reduce((s, t, i) => s + t * v[i], 0);
}

describe('batch selection', () => {
  const s = setup(2, 202);

  it('selectBest returns the argmax of score over 50 candidate batches (q = 3)', () => {
    const rng = Rng.fromSeed(1);
    const sel = prepareBatchSelection(s.model, s.mean, s.cov);
    const cands = Array.from({ length: 50 }, () => Array.from({ length: 3 }, () => Array.from(rng.normals(2))));
    const scores = cands.map((b) => sel.score(b));
    const best = sel.selectBest(cands);
    expect(best.score).toBe(Math.max(...scores));
    expect(best.index).toBe(scores.indexOf(best.score));
    expect(() => sel.selectBest([])).toThrow(EngineError);
  });

  it('selectBestStacked (one stacked matrix) gives the index and score of selectBest, for q = 1, 2, 3', () => {
    const rng = Rng.fromSeed(3);
    const sel = prepareBatchSelection(s.model, s.mean, s.cov, [s.mean]);
    for (const q of [1, 2, 3]) {
      // 61 batches: the four-lane candidate solves end on a partial group for every q here.
      const cands = Array.from({ length: 61 }, () => Array.from({ length: q }, () => Array.from(rng.normals(2))));
      const P = fromRows(cands.flat());
      const stacked = sel.selectBestStacked(P, q);
      const plain = sel.selectBest(cands);
      expect(stacked).toEqual(plain);
      expect(stacked.score).toBe(Math.max(...cands.map((b) => sel.score(b))));
    }
    expect(() => sel.selectBestStacked(fromRows([[0, 0], [1, 1], [2, 2]]), 2)).toThrow(EngineError);
    expect(() => sel.selectBestStacked(fromRows([[0, 0, 0]]), 1)).toThrow(EngineError);
  });

  it('selectGreedy from a pool: each pick is the argmax of a(chosen ∪ {b}) by the full block-inverse score, and its score is a(B)', () => {
    const rng = Rng.fromSeed(5);
    const sel = prepareBatchSelection(s.model, s.mean, s.cov, [s.mean]);
    // 37 points: the four-lane candidate solves end on a partial group.
    const pool = Array.from({ length: 37 }, () => s.mean.map((m) => m + 0.9 * rng.normal()));
    const P = fromRows(pool);
    for (const q of [1, 2, 4]) {
      const { rows, score } = sel.selectGreedy(P, q);
      expect(new Set(rows).size).toBe(q);
      const chosen: number[][] = [];
      for (const r of rows) {
        // Brute force: score(batch) is an independent computation (its own q×q Schur complement).
        const gains = pool.map((b, i) => (chosen.some((c) => c === pool[i]) ? -Infinity : sel.score([...chosen, b])));
        const best = Math.max(...gains);
        expect(gains[r]).toBeGreaterThanOrEqual(best - 1e-10 * Math.abs(best));
        chosen.push(pool[r]);
      }
      expect(score).toBeCloseTo(sel.score(chosen), 10);
    }
    expect(() => sel.selectGreedy(P, 38)).toThrow(EngineError);
    expect(() => sel.selectGreedy(fromRows([[0, 0, 0]]), 1)).toThrow(EngineError);
  });

  it('selectBestOfPool scores batches of pool rows exactly as selectBest scores the same batches written out', () => {
    const rng = Rng.fromSeed(7);
    const sel = prepareBatchSelection(s.model, s.mean, s.cov, [s.mean]);
    const pool = Array.from({ length: 41 }, () => s.mean.map((m) => m + 0.9 * rng.normal()));
    for (const q of [1, 2, 3]) {
      const idx = Int32Array.from({ length: 30 * q }, () => Math.floor(rng.uniform() * pool.length));
      const batches = Array.from({ length: 30 }, (_, b) => Array.from(idx.subarray(b * q, (b + 1) * q), (i) => pool[i]));
      expect(sel.selectBestOfPool(fromRows(pool), q, idx)).toEqual(sel.selectBest(batches));
    }
    expect(() => sel.selectBestOfPool(fromRows(pool), 2, Int32Array.from([0, 41]))).toThrow(EngineError);
    expect(() => sel.selectBestOfPool(fromRows(pool), 2, Int32Array.from([0, 1, 2]))).toThrow(EngineError);
  });

  it('selectGreedy beats or matches the best of 50 random batches drawn from the same pool (q = 3)', () => {
    const rng = Rng.fromSeed(6);
    const sel = prepareBatchSelection(s.model, s.mean, s.cov, [s.mean]);
    const pool = Array.from({ length: 60 }, () => s.mean.map((m) => m + 0.9 * rng.normal()));
    const greedy = sel.selectGreedy(fromRows(pool), 3).score;
    const random = Array.from({ length: 50 }, () => [0, 1, 2].map(() => pool[Math.floor(rng.uniform() * pool.length)]));
    expect(greedy).toBeGreaterThanOrEqual(sel.selectBest(random).score);
  });

  it('a batch of copies of already-observed points gains less than a spread batch; duplicates stay finite', () => {
    const sel = prepareBatchSelection(s.model, s.mean, s.cov, [s.mean, s.mean]);
    const x0 = toRowsOf(s.model.X)[0];
    const dup = sel.score([x0, x0, x0]);
    const spread = sel.score([s.mean.map((v) => v + 0.8), s.mean.map((v) => v - 0.8), [s.mean[0] + 0.8, s.mean[1] - 0.8]]);
    expect(Number.isFinite(dup) && Number.isFinite(spread)).toBe(true);
    expect(dup).toBeLessThan(spread);
  });
});

describe('sampled gradient', () => {
  it('is unbiased for the expected gradient: the mean over 2000 seeds (N = 20 each) is within 5 standard errors', () => {
    // A setup where every entry of G is large next to its Monte Carlo error: a non-separable quadratic
    // (so G is not diagonal), 30 points around ν, fixed hyperparameters with the constant c at the mean
    // of y (the estimator's baseline is c, and the score-function variance grows with E[f] − c).
    // The estimator is unbiased for any N, and per draw a small N is cheapest (the joint sample is
    // O(N³)), so many seeds of N = 20 give 40 000 draws in a few seconds. The bands are 11–16% of
    // |G_ij| (recorded at this commit), so a missing ½ in G (every entry doubled: 6–9 standard errors
    // off) fails; checked by removing it from quadrature/sampled.ts.
    const rng = Rng.fromSeed(303);
    const X = Array.from({ length: 30 }, () => Array.from(rng.normals(2), (v) => 1.5 * v));
    const y = X.map((x) => 0.5 * (x[0] + x[1]) ** 2 + 0.3 * x[0] + 0.4 * x[1] ** 2);
    const c = y.reduce((a, b) => a + b, 0) / y.length;
    const model = buildModel(toMat(X), y, { lengthscales: [1.5, 1.5], outputscale: 1, noise: 1e-4, constant: c });
    const mean = [0.3, -0.2], cov = [[0.5, 0.2], [0.2, 0.4]];
    const eg = expectedGradient(model, mean, cov);
    const reps = 2000;
    const acc = new Acc(6);
    for (let r = 0; r < reps; r++) {
      const sg = sampledGradient(model, mean, cov, Rng.fromSeed(r), 20);
      [...sg.gradMean, ...sg.gradCov.data].forEach((v, i) => acc.add(i, v));
    }
    const closed = [...eg.gradMean, ...eg.gradCov.data];
    closed.forEach((v, i) => expectMc(v, acc, i, reps));
    // The band is narrow enough to mean something: under a third of every entry of G.
    for (let i = 2; i < 6; i++) expect(K_SE * acc.se(i, reps)).toBeLessThan(Math.abs(closed[i]!) / 3);
  });

  it('is seeded (same seed, same answer) and finite at N = 1000', () => {
    const s = setup(5, 304);
    const a = sampledGradient(s.model, s.mean, s.cov, Rng.fromSeed(4), 1000);
    const b = sampledGradient(s.model, s.mean, s.cov, Rng.fromSeed(4), 1000);
    expect(Array.from(a.gradMean)).toEqual(Array.from(b.gradMean));
    for (const v of [...a.gradMean, ...a.gradCov.data]) expect(Number.isFinite(v)).toBe(true);
  });
});

describe('degenerate measures and points', () => {
  const s = setup(2, 404);

  it('points far outside ν give zero kernel means and a finite, zero-weight gradient', () => {
    const far = buildModel(toMat([[1e3, 1e3], [-1e3, 2e3]]), [1, -1], s.model.hyper);
    const eg = expectedGradient(far, [0, 0], [[1, 0], [0, 1]]);
    expect(Array.from(eg.t)).toEqual([0, 0]);
    for (const v of [...eg.gradMean, ...eg.gradCov.data]) expect(v).toBe(0);
    expect(bqIntegral(far, [0, 0], [[1, 0], [0, 1]]).variance).toBeCloseTo(integralPriorVariance(far.hyper, [[1, 0], [0, 1]]), 12);
  });

  it('a nearly singular Σ (1e-12·I) and a huge Σ (1e6·I) give finite results', () => {
    for (const c of [1e-12, 1e6]) {
      const cov = [[c, 0], [0, c]];
      const eg = expectedGradient(s.model, s.mean, cov);
      const bq = bqIntegral(s.model, s.mean, cov);
      for (const v of [...eg.gradMean, ...eg.gradCov.data, bq.mean, bq.variance, bq.priorVariance]) expect(Number.isFinite(v)).toBe(true);
    }
  });

  it('an indefinite Σ or a wrong shape is a typed error', () => {
    expect(() => expectedGradient(s.model, s.mean, [[1, 0], [0, -1e6]])).toThrow(EngineError);
    expect(() => expectedGradient(s.model, [0], [[1]])).toThrow(EngineError);
    expect(() => bqIntegral(s.model, s.mean, [[1, NaN], [NaN, 1]])).toThrow(EngineError);
  });
});

describe('hostile inputs (property test)', () => {
  it('fit + BQ + selection give finite numbers or a typed EngineError, never NaN/Infinity', async () => {
    const fc = await import('fast-check');
    const coord = fc.oneof(fc.double({ min: -5, max: 5, noNaN: true }), fc.constantFrom(0, 1e-12, -1e-12, 1e6, -1e6));
    const value = fc.oneof(fc.double({ min: -3, max: 3, noNaN: true }), fc.constantFrom(0, 1e12, -1e12, 1e-12));
    const data = fc.integer({ min: 1, max: 3 }).chain((d) =>
      fc.tuple(fc.constant(d), fc.array(fc.tuple(fc.array(coord, { minLength: d, maxLength: d }), value), { minLength: 1, maxLength: 12 }), fc.boolean()));
    fc.assert(
      fc.property(data, ([d, rows, duplicate]) => {
        const all = duplicate ? [...rows, ...rows] : rows;
        const X = all.map((r) => r[0]), y = all.map((r) => r[1]);
        const mean = new Array<number>(d).fill(0), cov = mean.map((_, i) => mean.map((__, j) => (i === j ? 1 : 0)));
        try {
          const { model } = fitGp(X, y, { priors: probnesPriors(d) });
          const eg = expectedGradient(model, mean, cov);
          const bq = bqIntegral(model, mean, cov);
          const sel = prepareBatchSelection(model, mean, cov, [mean]);
          const best = sel.selectBest([[X[0], mean], [mean.map((v) => v + 0.5), mean]]);
          return [...eg.gradMean, ...eg.gradCov.data, bq.mean, bq.variance, best.score].every(Number.isFinite);
        } catch (e) {
          return e instanceof EngineError;
        }
      }),
      { numRuns: 40, seed: 20261122 },
    );
  });
});
