/**
 * The mixed-space kernel and its Bayesian-quadrature closed forms (src/engine/gp/mixed-kernel.ts,
 * src/engine/quadrature/mixed.ts) against their definitions: the kernel against the RBF kernel on
 * the one-hot encoding computed independently, and every integral against seeded Monte Carlo over
 * ν = N(μ, Σ) × Π_j Cat(q_j), with the tolerance from the Monte Carlo standard error (5 SE).
 */
import { describe, expect, it } from 'vitest';
import { fitGp, probnesPriors, type GpModel } from '../../src/engine/gp/index.js';
import { encodeMixed, overlapKernel } from '../../src/engine/gp/mixed-kernel.js';
import { categoricalNaturalGradient, mixedBqIntegral, mixedExpectedGradient, mixedKernelMeans, type MixedMeasure } from '../../src/engine/quadrature/mixed.js';
import { crossKernel } from '../../src/engine/acquisition/posterior.js';
import { Rng, sampleMvn } from '../../src/engine/random/index.js';
import { cholesky, fromRows } from '../../src/engine/linalg/index.js';
import { sampleChoice } from '../../src/engine/distributions/categorical.js';

const K_SE = 5;

interface Setup {
  model: GpModel;
  nu: MixedMeasure;
  mean: number[];
  cov: number[][];
  /** Mixed points [u, c] of the training data. */
  points: number[][];
}

/** A GP fitted to 30 mixed points of a test function whose value depends on the choices, and a ν. */
function setup(dc: number, K: number[], seed: number): Setup {
  const rng = Rng.fromSeed(seed);
  const points = Array.from({ length: 30 }, () => [...Array.from(rng.normals(dc), (v) => 1.1 * v), ...K.map((k) => Math.floor(rng.uniform() * k))]);
  const f = (x: number[]) => x.slice(0, dc).reduce((a, v, i) => a + Math.sin(1.3 * v + i), 0) + x.slice(dc).reduce((a, c, j) => a + (c === 0 ? -1 : 0.5 * c) * (j + 1), 0);
  const y = points.map(f);
  const my = y.reduce((a, b) => a + b, 0) / y.length;
  const X = points.map((x) => encodeMixed(x, dc, K));
  const { model } = fitGp(X, y.map((v) => v - my), { priors: probnesPriors(X[0]!.length) });
  const q = K.map((k) => {
    const raw = Array.from({ length: k }, () => 0.2 + rng.uniform());
    const s = raw.reduce((a, b) => a + b, 0);
    return raw.map((v) => v / s);
  });
  const cov = Array.from({ length: dc }, (_, i) => Array.from({ length: dc }, (_, j) => (i === j ? 0.5 + 0.2 * i : 0.1)));
  const mean = Array.from(rng.normals(dc), (v) => 0.3 * v);
  return { model, nu: { dc, K, q }, mean, cov, points };
}

/** One draw x ~ ν as a mixed point. */
function draw(rng: Rng, s: Setup, L: number[][]): number[] {
  const u = s.nu.dc > 0 ? Array.from(sampleMvn(rng, s.mean, L)) : [];
  return [...u, ...s.nu.q.map((q) => sampleChoice(rng, q))];
}

function mc(N: number, sample: () => number): { mean: number; se: number } {
  let a = 0, b = 0;
  for (let k = 0; k < N; k++) {
    const v = sample();
    a += v;
    b += v * v;
  }
  const m = a / N;
  return { mean: m, se: Math.sqrt(Math.max(b / N - m * m, 0) / N) };
}

const lowerRows = (cov: number[][]) => {
  if (cov.length === 0) return [];
  const { L } = cholesky(fromRows(cov));
  return Array.from({ length: L.rows }, (_, i) => Array.from(L.data.subarray(i * L.cols, (i + 1) * L.cols)));
};

describe('mixed kernel', () => {
  it('is the ARD RBF kernel on the one-hot encoding: s·exp(−½ continuous distance)·Π κ_j', () => {
    const s = setup(2, [3, 2], 11);
    const { lengthscales: ell, outputscale } = s.model.hyper;
    const x = [0.3, -0.2, 2, 1];
    const k = crossKernel(s.model, encodeMixed(x, 2, [3, 2]));
    s.points.forEach((p, i) => {
      let r2 = 0;
      for (let a = 0; a < 2; a++) r2 += ((x[a]! - p[a]!) / ell[a]!) ** 2;
      const w0 = ell.slice(2, 5).map((l) => 1 / (l * l));
      const w1 = ell.slice(5, 7).map((l) => 1 / (l * l));
      const want = outputscale * Math.exp(-0.5 * r2) * overlapKernel(w0, x[2]!, p[2]!) * overlapKernel(w1, x[3]!, p[3]!);
      expect(k[i]).toBeCloseTo(want, 12);
    });
  });
});

describe('mixed Bayesian quadrature against Monte Carlo (5·10⁴ draws, 5 SE)', () => {
  for (const [dc, K] of [[2, [3, 2]], [0, [4]], [1, [2, 3, 5]]] as [number, number[]][]) {
    it(`kernel means, R, E[g] and the categorical natural gradient (d_c = ${dc}, K = [${K}])`, () => {
      const s = setup(dc, K, 100 + dc);
      const L = lowerRows(s.cov);
      const mq = mixedKernelMeans(s.model, s.nu, s.mean, s.cov);
      const bq = mixedBqIntegral(s.model, s.nu, s.mean, s.cov);
      const grad = categoricalNaturalGradient(s.model, s.nu, mq);
      const N = 50_000;
      // k(a, b) as the RBF kernel on the one-hot encodings, written out (independent of mixed-kernel.ts's κ).
      const { lengthscales: ell, outputscale } = s.model.hyper;
      const kAt = (a: number[], b: number[]) => {
        const ea = encodeMixed(a, dc, K), eb = encodeMixed(b, dc, K);
        return outputscale * Math.exp(-0.5 * ea.reduce((acc, v, c) => acc + ((v - eb[c]!) / ell[c]!) ** 2, 0));
      };
      // t_i for three training points: E_ν[k(x, x_i)].
      for (const i of [0, 7, 19]) {
        const rng = Rng.fromSeed(1000 + i);
        const est = mc(N, () => kAt(draw(rng, s, L), s.points[i]!));
        expect(Math.abs(mq.t[i]! - est.mean)).toBeLessThanOrEqual(K_SE * est.se + 1e-12);
      }
      // R = E_{ν×ν}[k(x, x')].
      const rngR = Rng.fromSeed(2000);
      const estR = mc(N, () => kAt(draw(rngR, s, L), draw(rngR, s, L)));
      expect(Math.abs(bq.priorVariance - estR.mean)).toBeLessThanOrEqual(K_SE * estR.se + 1e-12);
      // E[g] = E_ν[m_post(x)], m_post(x) = c + k(x, X) α.
      const post = (x: number[]) => {
        const k = crossKernel(s.model, encodeMixed(x, dc, K));
        return k.reduce((a, v, i) => a + v * s.model.alpha[i]!, s.model.hyper.constant);
      };
      const rngG = Rng.fromSeed(3000);
      const xs = Array.from({ length: N }, () => draw(rngG, s, L));
      const ms = xs.map(post);
      const estG = mc(N, (() => { let k = 0; return () => ms[k++]!; })());
      expect(Math.abs(bq.mean - estG.mean)).toBeLessThanOrEqual(K_SE * estG.se + 1e-12);
      // ĝ_j = E_ν[(m_post(x) − b)(e_{c_j} − q_j)], b = E[g] a baseline that changes no expectation.
      K.forEach((Kj, j) => {
        for (let a = 0; a < Kj; a++) {
          let k = 0;
          const est = mc(N, () => {
            const x = xs[k]!, v = ms[k++]! - bq.mean;
            return v * ((x[dc + j] === a ? 1 : 0) - s.nu.q[j]![a]!);
          });
          expect(Math.abs(grad[j]![a]! - est.mean)).toBeLessThanOrEqual(K_SE * est.se + 1e-12);
        }
        // A natural gradient on the simplex has zero sum (Σ_a (e_a − q)_a = 0).
        expect(Math.abs(grad[j]!.reduce((p, v) => p + v, 0))).toBeLessThan(1e-12 * Math.max(1, ...grad[j]!.map(Math.abs)));
      });
      if (dc > 0) {
        // g_μ = E_ν[(m_post − b) Σ⁻¹(u − μ)] and G = E_ν[(m_post − b) ½(Σ⁻¹rrᵀΣ⁻¹ − Σ⁻¹)] (score-function forms).
        const { gMean, gCov } = mixedExpectedGradient(s.model, s.nu, s.mean, s.cov);
        const Sinv = invert(s.cov);
        const score = xs.map((x) => {
          const r = x.slice(0, dc).map((v, a) => v - s.mean[a]!);
          return Sinv.map((row) => row.reduce((acc, v, b) => acc + v * r[b]!, 0));
        });
        for (let a = 0; a < dc; a++) {
          let k = 0;
          const est = mc(N, () => (ms[k]! - bq.mean) * score[k++]![a]!);
          expect(Math.abs(gMean[a]! - est.mean)).toBeLessThanOrEqual(K_SE * est.se + 1e-12);
          for (let b = 0; b < dc; b++) {
            let k2 = 0;
            const estC = mc(N, () => {
              const p = score[k2]!, v = ms[k2++]! - bq.mean;
              return v * 0.5 * (p[a]! * p[b]! - Sinv[a]![b]!);
            });
            expect(Math.abs(gCov[a]![b]! - estC.mean)).toBeLessThanOrEqual(K_SE * estC.se + 1e-12);
          }
        }
      }
    });
  }

  it('the posterior variance of the integral is R − tᵀK⁻¹t ≥ 0 and shrinks with data at the measure', () => {
    const s = setup(2, [3], 7);
    const bq = mixedBqIntegral(s.model, s.nu, s.mean, s.cov);
    expect(bq.variance).toBeGreaterThanOrEqual(0);
    expect(bq.variance).toBeLessThan(bq.priorVariance);
  });
});

describe('categorical natural gradient: the Fisher form against finite differences', () => {
  it('F⁻¹ ∂E_q[f]/∂θ (θ = q_1 … q_{K−1}) equals E_q[f (e_c − q)] restricted to θ', async () => {
    const { naturalGradient } = await import('../../src/engine/distributions/categorical.js');
    const f = [0.3, -1.2, 2.0, 0.7];
    const q = [0.1, 0.4, 0.3, 0.2];
    const K = q.length;
    // E_q[f (e_c − q)] exactly: weights w_c = q_c f_c over all K choices.
    const ng = naturalGradient(q, [0, 1, 2, 3], q.map((qc, c) => qc * f[c]!));
    // ∂E/∂θ_a with q_K = 1 − Σθ: central differences of E(θ) = Σ_a θ_a f_a + (1 − Σθ) f_K.
    const E = (th: number[]) => th.reduce((s, v, a) => s + v * f[a]!, 0) + (1 - th.reduce((s, v) => s + v, 0)) * f[K - 1]!;
    const th = q.slice(0, K - 1);
    const h = 1e-6;
    const grad = th.map((_, a) => {
      const p = [...th], m = [...th];
      p[a]! += h;
      m[a]! -= h;
      return (E(p) - E(m)) / (2 * h);
    });
    // F = −E[∂² ln q(c)/∂θ∂θ] = diag(1/θ) + 11ᵀ/q_K (the categorical Fisher information in θ); solve F x = grad.
    const F = th.map((ta, a) => th.map((_, b) => (a === b ? 1 / ta : 0) + 1 / q[K - 1]!));
    const x = solve(F, grad);
    x.forEach((v, a) => expect(v).toBeCloseTo(ng[a]!, 6));
  });
});

/** A⁻¹ for a small SPD matrix, column by column with `solve`. */
function invert(A: number[][]): number[][] {
  const n = A.length;
  const cols = Array.from({ length: n }, (_, c) => solve(A, Array.from({ length: n }, (_, r) => (r === c ? 1 : 0))));
  return Array.from({ length: n }, (_, r) => cols.map((col) => col[r]!));
}

function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < n; c++) {
    for (let r = c + 1; r < n; r++) {
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r]![n]!;
    for (let k = r + 1; k < n; k++) s -= M[r]![k]! * x[k]!;
    x[r] = s / M[r]![r]!;
  }
  return x;
}
