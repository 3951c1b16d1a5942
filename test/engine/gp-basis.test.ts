/**
 * The GP with explicit basis functions (gp/basis.ts, gp/reml.ts) and the Gaussian expectation of its
 * quadratic mean (quadrature/quadratic.ts): docs/ALGORITHM.md §14–§15.
 * Expected values come from independent routes: the features' dot product with β (the quadratic's
 * definition), central finite differences, the constant-mean likelihood of mll.ts plus the REML
 * correction, an exact quadratic (GLS must recover it), and 10⁶-draw Monte Carlo.
 */
import { describe, expect, it } from 'vitest';
import {
  type BasisKind,
  basisMatrix,
  basisSize,
  chooseBasis,
  evalQuadratic,
  fitGp,
  logMarginalLikelihood,
  lowerInverse,
  packHyper,
  probnesPriors,
  quadraticFromBasis,
  remlObjectiveEvaluator,
  restrictedLogLikelihood,
  toMat,
  type GpHyper,
} from '../../src/engine/gp/index.js';
import { type Mat, cholesky, cholSolve, fromRows } from '../../src/engine/linalg/index.js';
import { contrastBasis, contrastIsCheaper } from '../../src/engine/gp/reml-contrast.js';
import { bqIntegral, quadraticMoments } from '../../src/engine/quadrature/index.js';
import { expectedGradientRows as expectedGradient, integralMoments, fitProbnesGp, predictAt } from '../../src/engine/strategies/probnes-bq.js';
import { kernelMatrix as gpKernel } from '../../src/engine/gp/kernel.js';
import { Rng } from '../../src/engine/random/index.js';

const KINDS: BasisKind[] = ['constant', 'linear', 'diagonal', 'full'];
/** Monte Carlo tolerance in standard errors (as in quadrature.test.ts). */
const K_SE = 5;

function randomCov(d: number, rng: Rng, ridge = 0.3): number[][] {
  const A = Array.from({ length: d }, () => Array.from(rng.normals(d), (v) => (0.5 * v) / Math.sqrt(d)));
  return A.map((ai, i) => A.map((aj, j) => ai.reduce((s, v, k) => s + v * aj[k], 0) + (i === j ? ridge : 0)));
}

function points(n: number, d: number, rng: Rng, s = 1): number[][] {
  return Array.from({ length: n }, () => Array.from(rng.normals(d), (v) => s * v));
}

describe('basis functions', () => {
  it('sizes: 1, 1 + d, 1 + 2d, 1 + d + d(d+1)/2; chooseBasis takes the richest with n ≥ 1.5·p', () => {
    expect(KINDS.map((k) => basisSize(k, 5))).toEqual([1, 6, 11, 21]);
    expect(chooseBasis(31, 5)).toBe('diagonal'); // 31 < 31.5
    expect(chooseBasis(32, 5)).toBe('full');
    expect(chooseBasis(9, 5)).toBe('linear');
    expect(chooseBasis(8, 5)).toBe('constant');
    expect(chooseBasis(9, 2)).toBe('full'); // p = 6
  });

  it.each(KINDS)('%s: the quadratic in u equals h(u)ᵀβ at random points (whitened around c by L_c⁻¹)', (kind) => {
    const d = 4, rng = Rng.fromSeed(11);
    const cov = randomCov(d, rng);
    const W = lowerInverse(cholesky(fromRows(cov)).L);
    const centre = Array.from(rng.normals(d));
    const beta = Array.from(rng.normals(basisSize(kind, d)));
    const U = points(20, d, rng, 2);
    const H = basisMatrix(kind, toMat(U), centre, W);
    const q = quadraticFromBasis(kind, beta, centre, W);
    U.forEach((u, j) => {
      const direct = beta.reduce((s, b, a) => s + b * H.data[j * beta.length + a], 0);
      expect(Math.abs(evalQuadratic(q, u) - direct)).toBeLessThan(1e-12 * (1 + Math.abs(direct)));
    });
  });

  it('W = L⁻¹: W·L is the identity', () => {
    const d = 5, L = cholesky(fromRows(randomCov(d, Rng.fromSeed(3)))).L;
    const W = lowerInverse(L);
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += W.data[i * d + k] * L.data[k * d + j];
      expect(Math.abs(s - (i === j ? 1 : 0))).toBeLessThan(1e-12);
    }
  });
});

describe('restricted likelihood', () => {
  const d = 3, n = 25, rng = Rng.fromSeed(21);
  const U = points(n, d, rng);
  const y = U.map((u) => Math.sin(2 * u[0]) + u[1] * u[1] - 0.5 * u[2] + 0.3 * u[0] * u[2]);
  const X = toMat(U);
  const hyper: GpHyper = { lengthscales: [0.8, 1.3, 0.6], outputscale: 1.4, noise: 0.05, constant: 0 };

  it('with the constant basis it is the constant-mean log likelihood at c = β̂ (GLS) − ½ log(1ᵀK⁻¹1) + ½ log 2π', () => {
    const H = toMat(U.map(() => [1]));
    const K = gpKernel(X, hyper);
    const L = cholesky(K).L;
    const Kinv1 = cholSolve(L, new Array(n).fill(1));
    const oneKone = Kinv1.reduce((s, v) => s + v, 0);
    const c = Kinv1.reduce((s, v, i) => s + v * y[i], 0) / oneKone; // GLS mean
    const ml = logMarginalLikelihood(X, y, { ...hyper, constant: c }, false).value;
    const expected = ml - 0.5 * Math.log(oneKone) + 0.5 * Math.log(2 * Math.PI);
    expect(Math.abs(restrictedLogLikelihood(X, y, H, hyper) - expected)).toBeLessThan(1e-10 * Math.abs(expected));
  });

  // n = 25 and p = 4, 7, 10: the four-at-a-time loops of reml.ts with every remainder (0, 1, 2, 3).
  it.each(['linear', 'diagonal', 'full'] as const)('%s basis: the analytic gradient equals central finite differences of the MAP objective', (kind) => {
    const W = lowerInverse(cholesky(fromRows(randomCov(d, Rng.fromSeed(4)))).L);
    const H = basisMatrix(kind, X, [0.1, -0.2, 0.3], W);
    const ev = remlObjectiveEvaluator(X, y, H, probnesPriors(d));
    const phi = packHyper(hyper);
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
    expect(g[d + 2]).toBe(0); // c is not a parameter
  });
});

describe('restricted likelihood by error contrasts (reml-contrast.ts)', () => {
  // Harville (1974): for H of full column rank both routes are the same function of φ; expected
  // values come from the GLS route (itself checked above against the constant-mean likelihood and
  // finite differences). n and p around the four-at-a-time widths, and the d = 10 floor case n = 1.5p.
  it.each([[3, 25, 'full'], [2, 13, 'full'], [4, 23, 'diagonal'], [10, 99, 'full']] as const)('d = %i, n = %i, %s basis: value and gradient equal the GLS route to 1e-9', (d, n, kind) => {
    const rng = Rng.fromSeed(40 + n);
    const U = points(n, d, rng);
    const y = U.map((u) => Math.sin(2 * u[0]) + u[1] * u[1] - 0.5 * u[d - 1] + 0.3 * u[0] * u[d - 1]);
    const X = toMat(U);
    const W = lowerInverse(cholesky(fromRows(randomCov(d, rng))).L);
    const H = basisMatrix(kind, X, Array.from(rng.normals(d), (v) => 0.2 * v), W);
    expect(contrastBasis(H)).not.toBeNull();
    const gls = remlObjectiveEvaluator(X, y, H, probnesPriors(d), 'gls');
    const con = remlObjectiveEvaluator(X, y, H, probnesPriors(d), 'contrast');
    for (const h of [
      { lengthscales: new Array(d).fill(1.1), outputscale: 1.4, noise: 0.05, constant: 0 },
      { lengthscales: Array.from({ length: d }, (_, i) => 0.5 + 0.3 * i), outputscale: 0.7, noise: 1e-3, constant: 0 },
    ]) {
      const phi = packHyper(h);
      const a = gls.value(phi), b = con.value(phi);
      expect(Math.abs(a - b)).toBeLessThan(1e-9 * Math.max(1, Math.abs(a)));
      const ga = gls.gradient(), gb = con.gradient();
      for (let k = 0; k < ga.length; k++) expect(Math.abs(ga[k] - gb[k])).toBeLessThan(1e-9 * Math.max(1, Math.abs(ga[k])));
    }
  });

  it('F is orthonormal and orthogonal to H; a rank-deficient H has no contrast basis (the GLS route is used)', () => {
    const rng = Rng.fromSeed(44);
    const X = toMat(points(17, 3, rng));
    const H = basisMatrix('full', X, [0, 0, 0], lowerInverse(cholesky(fromRows(randomCov(3, rng))).L));
    const cb = contrastBasis(H)!;
    const n = 17, p = H.cols, m = n - p;
    expect(cb.m).toBe(m);
    for (let a = 0; a < m; a++) {
      for (let b = 0; b < m; b++) {
        let s = 0;
        for (let i = 0; i < n; i++) s += cb.Ft[a * n + i] * cb.Ft[b * n + i];
        expect(Math.abs(s - (a === b ? 1 : 0))).toBeLessThan(1e-12);
      }
      for (let k = 0; k < p; k++) {
        let s = 0;
        for (let i = 0; i < n; i++) s += cb.Ft[a * n + i] * H.data[i * p + k];
        expect(Math.abs(s)).toBeLessThan(1e-12);
      }
    }
    // Two equal columns: rank p − 1.
    const D = toMat(Array.from({ length: n }, (_, i) => [1, H.data[i * p + 1], H.data[i * p + 1]]));
    expect(contrastBasis(D)).toBeNull();
    expect(contrastIsCheaper(100, 66)).toBe(true); // d = 10 at the floor
    expect(contrastIsCheaper(100, 6)).toBe(false); // d = 2
  });

  it('the tiled Householder loops equal the one-column loops of Golub & Van Loan Alg. 5.2.1 bit for bit', () => {
    // Reference: Householder QR one column at a time, then Fᵀ's rows as Q applied to e_{p+c} one at a time.
    const plain = (H: Mat) => {
      const n = H.rows, p = H.cols, m = n - p;
      const a = new Float64Array(n * p), V = new Float64Array(n * p), beta = new Float64Array(p);
      for (let i = 0; i < n; i++) for (let k = 0; k < p; k++) a[k * n + i] = H.data[i * p + k];
      for (let k = 0; k < p; k++) {
        let norm = 0;
        for (let i = k; i < n; i++) norm += a[k * n + i] * a[k * n + i];
        norm = Math.sqrt(norm);
        const r = a[k * n + k] > 0 ? -norm : norm;
        let vtv = 0;
        for (let i = k; i < n; i++) {
          V[k * n + i] = i === k ? a[k * n + k] - r : a[k * n + i];
          vtv += V[k * n + i] * V[k * n + i];
        }
        beta[k] = vtv > 0 ? 2 / vtv : 0;
        for (let j = k + 1; j < p; j++) {
          let s = 0;
          for (let i = k; i < n; i++) s += V[k * n + i] * a[j * n + i];
          s *= beta[k];
          for (let i = k; i < n; i++) a[j * n + i] -= s * V[k * n + i];
        }
      }
      const Ft = new Float64Array(m * n);
      for (let c = 0; c < m; c++) {
        Ft[c * n + p + c] = 1;
        for (let k = p - 1; k >= 0; k--) {
          let s = 0;
          for (let i = k; i < n; i++) s += V[k * n + i] * Ft[c * n + i];
          s *= beta[k];
          for (let i = k; i < n; i++) Ft[c * n + i] -= s * V[k * n + i];
        }
      }
      return Ft;
    };
    const rng = Rng.fromSeed(45);
    // Sizes around the tile width of 4 in both p (columns) and m = n − p (contrasts); d = 10 at the floor last.
    for (const [n, p] of [[9, 3], [12, 5], [14, 6], [17, 10], [99, 66]]) {
      const H: Mat = { rows: n, cols: p, data: Float64Array.from(rng.normals(n * p)) };
      const cb = contrastBasis(H)!;
      const ref = plain(H);
      for (let i = 0; i < ref.length; i++) expect(cb.Ft[i]).toBe(ref[i]);
    }
  });
});

describe('fit with a basis', () => {
  it('an exact quadratic is recovered by GLS (residual ≈ 0), and the prediction is the quadratic', () => {
    const d = 3, rng = Rng.fromSeed(31);
    const U = points(30, d, rng);
    const A = [[1.5, 0.3, -0.2], [0.3, 0.7, 0.1], [-0.2, 0.1, 2.0]], b = [0.5, -1, 0.25], a0 = 0.7;
    const c0 = [0.2, 0.1, -0.3];
    const f = (u: number[]) => {
      const r = u.map((v, i) => v - c0[i]);
      return a0 + b.reduce((s, v, i) => s + v * r[i], 0) + r.reduce((s, ri, i) => s + ri * A[i].reduce((t, v, j) => t + v * r[j], 0), 0);
    };
    const y = U.map(f);
    const cov = randomCov(d, rng, 0.5);
    const out = fitProbnesGp(U, y, { warmStart: null, restarts: 0, rng, quadratic: { centre: c0, cov } });
    expect(out.basis).toBe('full');
    for (let i = 0; i < d; i++) {
      expect(out.quad!.b[i]).toBeCloseTo(b[i], 5);
      for (let j = 0; j < d; j++) expect(out.quad!.A[i][j]).toBeCloseTo(A[i][j], 5);
    }
    expect(out.quad!.a0).toBeCloseTo(a0, 5);
    const x = [1.1, -0.4, 0.9];
    expect(predictAt(out.model, x, out.quad).mean).toBeCloseTo(f(x), 4);
  });

  it('too few points for a linear basis: the constant-mean GP of ALGORITHM.md §2, bit for bit', () => {
    const d = 5, rng = Rng.fromSeed(41);
    const U = points(8, d, rng), y = U.map((u) => u[0] ** 2);
    const cov = randomCov(d, rng);
    const q = fitProbnesGp(U, y, { warmStart: null, restarts: 0, rng: Rng.fromSeed(1), quadratic: { centre: new Array(d).fill(0), cov } });
    const c = fitGp(U, y, { priors: probnesPriors(d), warmStart: null, restarts: 0, rng: Rng.fromSeed(1) });
    expect(q.basis).toBe('constant');
    expect(q.quad).toBeNull();
    expect(q.model.hyper).toEqual(c.model.hyper);
    expect(Array.from(q.model.alpha)).toEqual(Array.from(c.model.alpha));
  });
});

describe.each([
  [2, 52],
  [5, 55],
])('BQ of the quadratic mean in d = %i', (d, seed) => {
  const rng = Rng.fromSeed(seed);
  const cov = randomCov(d, rng);
  const mean = Array.from(rng.normals(d), (v) => 0.4 * v);
  const Araw = randomCov(d, rng, 0.1);
  const q = { centre: Array.from(rng.normals(d), (v) => 0.3 * v), a0: 0.4, b: Array.from(rng.normals(d)), A: Araw.map((r, i) => r.map((v, j) => (i === j ? v - 0.5 : v))) };

  it(`E, ∂E/∂μ and ∂E/∂Σ agree with Monte Carlo over 10⁶ draws from ν within ${K_SE} standard errors`, () => {
    const m = quadraticMoments(q, mean, cov);
    const L = cholesky(fromRows(cov)).L.data;
    const N = 1_000_000, mc = Rng.fromSeed(seed + 1);
    const e = new Float64Array(d), x = new Float64Array(d), p = new Float64Array(d);
    const sum = new Float64Array(1 + d + d * d), sq = new Float64Array(1 + d + d * d);
    const Ci = cholSolveRows(cov);
    for (let it = 0; it < N; it++) {
      mc.fillNormal(e);
      for (let i = 0; i < d; i++) {
        let s = mean[i];
        for (let k = 0; k <= i; k++) s += L[i * d + k] * e[k];
        x[i] = s;
      }
      for (let i = d - 1; i >= 0; i--) {
        let v = e[i];
        for (let k = i + 1; k < d; k++) v -= L[k * d + i] * p[k];
        p[i] = v / L[i * d + i];
      }
      const f = evalQuadratic(q, x);
      const w = f - m.integral; // constant baseline: same expectation, less variance
      const vals = [f, ...Array.from(p, (pa) => w * pa)];
      for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) vals.push(0.5 * w * (p[a] * p[b] - Ci[a][b]));
      for (let k = 0; k < vals.length; k++) {
        sum[k] += vals[k];
        sq[k] += vals[k] * vals[k];
      }
    }
    const closed = [m.integral, ...m.gradMean, ...m.gradCov.data];
    closed.forEach((c, k) => {
      const mu = sum[k] / N, se = Math.sqrt(Math.max(sq[k] / N - mu * mu, 0) / N);
      expect(Math.abs(c - mu)).toBeLessThanOrEqual(K_SE * se + 1e-12);
    });
  });

  it('∂E/∂μ and ∂E/∂Σ equal central finite differences (exact on a quadratic up to rounding)', () => {
    const m = quadraticMoments(q, mean, cov);
    const E = (mu: number[], c: number[][]) => quadraticMoments(q, mu, c).integral;
    const h = 1e-4;
    for (let a = 0; a < d; a++) {
      const up = mean.slice(), dn = mean.slice();
      up[a] += h;
      dn[a] -= h;
      expect(Math.abs((E(up, cov) - E(dn, cov)) / (2 * h) - m.gradMean[a])).toBeLessThan(1e-9);
      for (let b = a; b < d; b++) {
        const cu = cov.map((r) => r.slice()), cd = cov.map((r) => r.slice());
        cu[a][b] += h; cd[a][b] -= h;
        if (a !== b) { cu[b][a] += h; cd[b][a] -= h; }
        const G = m.gradCov.data;
        const expected = a === b ? G[a * d + a] : G[a * d + b] + G[b * d + a];
        expect(Math.abs((E(mean, cu) - E(mean, cd)) / (2 * h) - expected)).toBeLessThan(1e-9);
      }
    }
  });
});

describe('the full surrogate (basis mean + residual GP)', () => {
  const d = 3, rng = Rng.fromSeed(61);
  const U = points(35, d, rng);
  const y = U.map((u) => Math.sin(1.5 * u[0]) + 0.8 * u[1] * u[1] + u[0] * u[2] - 0.3 * u[2]);
  const cov = randomCov(d, rng, 0.4);
  const centre = [0.1, 0, -0.1];
  const fit = fitProbnesGp(U, y, { warmStart: null, restarts: 0, rng, quadratic: { centre, cov } });
  const mean = [0.3, -0.2, 0.1];

  it('uses the full quadratic and a non-trivial residual GP', () => {
    expect(fit.basis).toBe('full');
    expect(Math.max(...Array.from(fit.model.alpha, Math.abs))).toBeGreaterThan(1e-6);
  });

  it('g_μ and G equal central finite differences of E[g] = E_ν[quad] + residual BQ', () => {
    const g = expectedGradient(fit.model, mean, cov, fit.quad);
    const E = (mu: number[], c: number[][]) => integralMoments(fit.model, mu, c, fit.quad).mean;
    const h = 1e-5;
    const tol = 1e-6 * Math.max(...g.gMean.map(Math.abs), ...g.gCov.flat().map(Math.abs));
    for (let a = 0; a < d; a++) {
      const up = mean.slice(), dn = mean.slice();
      up[a] += h;
      dn[a] -= h;
      expect(Math.abs((E(up, cov) - E(dn, cov)) / (2 * h) - g.gMean[a])).toBeLessThan(tol);
      for (let b = a; b < d; b++) {
        const cu = cov.map((r) => r.slice()), cd = cov.map((r) => r.slice());
        cu[a][b] += h; cd[a][b] -= h;
        if (a !== b) { cu[b][a] += h; cd[b][a] -= h; }
        const expected = a === b ? g.gCov[a][a] : g.gCov[a][b] + g.gCov[b][a];
        expect(Math.abs((E(mean, cu) - E(mean, cd)) / (2 * h) - expected)).toBeLessThan(tol);
      }
    }
  });

  it(`E[g] agrees with Monte Carlo of the posterior mean over 10⁶ draws from ν within ${K_SE} standard errors`, () => {
    const closed = integralMoments(fit.model, mean, cov, fit.quad).mean;
    const L = cholesky(fromRows(cov)).L.data, X = fit.model.X.data, n = fit.model.X.rows, hp = fit.model.hyper;
    const il2 = hp.lengthscales.map((l) => 1 / (l * l));
    const N = 1_000_000, mc = Rng.fromSeed(62), e = new Float64Array(d), x = new Float64Array(d);
    let s1 = 0, s2 = 0;
    for (let it = 0; it < N; it++) {
      mc.fillNormal(e);
      for (let i = 0; i < d; i++) {
        let v = mean[i];
        for (let k = 0; k <= i; k++) v += L[i * d + k] * e[k];
        x[i] = v;
      }
      let m = evalQuadratic(fit.quad!, x);
      for (let j = 0; j < n; j++) {
        let r = 0;
        for (let k = 0; k < d; k++) r += (x[k] - X[j * d + k]) ** 2 * il2[k];
        m += fit.model.alpha[j] * hp.outputscale * Math.exp(-0.5 * r);
      }
      s1 += m;
      s2 += m * m;
    }
    const mu = s1 / N, se = Math.sqrt((s2 / N - mu * mu) / N);
    expect(Math.abs(closed - mu)).toBeLessThanOrEqual(K_SE * se);
    // The residual part alone is bq.ts's integral of the residual GP (zero constant).
    expect(fit.model.hyper.constant).toBe(0);
    expect(bqIntegral(fit.model, mean, cov).mean).toBeCloseTo(closed - quadraticMoments(fit.quad!, mean, cov).integral, 12);
  });
});

function cholSolveRows(cov: number[][]): number[][] {
  const L = cholesky(fromRows(cov)).L;
  const d = cov.length;
  return Array.from({ length: d }, (_, i) => Array.from(cholSolve(L, Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)))));
}
