/**
 * CMA-ES properties from Hansen's tutorial (arXiv:1604.00772): Table 1 parameters, invariance to
 * order-preserving transformations of f and to rotations of the search space, linear convergence on
 * the sphere, and the service-specific semantics of cmaes.ts (batches of size ≠ λ, injected points).
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { fromRows, matVec, symEig, symSqrtm } from '../../src/engine/linalg/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { type CmaesState, cmaParameters, cmaes } from '../../src/engine/strategies/cmaes.js';
import type { Observation } from '../../src/engine/strategies/types.js';
import { logSlope, median, rotation } from '../helpers/numeric.js';

type F = (x: number[]) => number;
const NO_CTX = { history: [], pending: [] };
const sphere: F = (x) => x.reduce((s, v) => s + (v - 1) ** 2, 0);
const ellipsoid: F = (x) => x.reduce((s, v, i) => s + 10 ** ((3 * i) / Math.max(x.length - 1, 1)) * (v - 0.5) ** 2, 0);

function start(d: number, lambda: number, seed: number, sigma0 = 1): CmaesState {
  return cmaes.init({ dim: d, batchSize: lambda, options: { sigma0, active: true } }, Rng.fromSeed(seed));
}

/** One generation through ask/tell; returns the new state and the batch. */
function step(state: CmaesState, f: F): { state: CmaesState; batch: Observation[] } {
  const { points, state: s } = cmaes.ask(state, NO_CTX, state.batchSize);
  const batch = points.map((x) => ({ x, y: f(x) }));
  return { state: cmaes.tell(s, { batch, history: batch }), batch };
}

function run(f: F, d: number, lambda: number, gens: number, seed: number): { states: CmaesState[]; points: number[][][] } {
  let state = start(d, lambda, seed);
  const states = [state];
  const points: number[][][] = [];
  for (let g = 0; g < gens; g++) {
    const r = step(state, f);
    points.push(r.batch.map((o) => o.x));
    states.push((state = r.state));
  }
  return { states, points };
}

describe('CMA-ES parameters (tutorial Table 1)', () => {
  it('matches the published μ_eff and w_1 (pycma prints "(3_w,6) mu_w=2.0, w_1=63%" at n = 2 and "(5_w,10) mu_w=3.2, w_1=46%" at n = 10)', () => {
    const p2 = cmaParameters(2, 6);
    expect(p2.mu).toBe(3);
    // By hand from (49): w' = ln 3.5 − ln i = (1.25276, 0.55962, 0.15415) → μ_eff = 1.966529² / 1.906347.
    expect(p2.mueff).toBeCloseTo(2.028611, 5);
    expect(p2.weights[0]).toBeCloseTo(0.637043, 5);
    const p10 = cmaParameters(10, 10);
    // w' = ln 5.5 − ln i = (1.70475, 1.01160, 0.60614, 0.31845, 0.09531) → μ_eff = 3.736249² / 4.407400.
    expect(p10.mueff).toBeCloseTo(3.167299, 5);
    expect(p10.weights[0]).toBeCloseTo(0.45627, 4);
  });

  it.each([2, 3, 6, 10, 50])('λ = %i, n = 5: weights as (53), learning rates in range', (lambda) => {
    const n = 5;
    const p = cmaParameters(n, lambda);
    const pos = p.weights.filter((w) => w > 0).reduce((s, w) => s + w, 0);
    const neg = p.weights.filter((w) => w < 0).reduce((s, w) => s + w, 0);
    expect(pos).toBeCloseTo(1, 12);
    expect(p.weights.slice(1).every((w, i) => w < p.weights[i])).toBe(true); // decreasing
    // Negative weights sum to −min(α_μ⁻, α_μeff⁻, α_posdef⁻); α_posdef⁻ keeps (47) positive definite.
    const alphaPosdef = (1 - p.c1 - p.cmu) / (n * p.cmu);
    expect(-neg).toBeLessThanOrEqual(alphaPosdef + 1e-12);
    expect(p.mueff).toBeGreaterThanOrEqual(1);
    for (const c of [p.c1, p.cmu, p.cSigma, p.cc]) expect(c > 0 && c < 1).toBe(true);
    expect(p.c1 + p.cmu).toBeLessThanOrEqual(1);
    expect(p.dSigma).toBeGreaterThanOrEqual(1);
  });

  it('λ = 2 is sane (μ = 1, μ_eff = 1, c_μ > 0 thanks to the ¼ of (58)) and still converges', () => {
    const p = cmaParameters(2, 2);
    expect([p.mu, p.mueff]).toEqual([1, 1]);
    expect(p.cmu).toBeGreaterThan(0);
    // Measured over 7 seeds: final f(mean) after 300 generations 1.7e-22 … 5.9e-7.
    for (let seed = 0; seed < 5; seed++) {
      const { states } = run(sphere, 2, 2, 300, seed);
      expect(sphere(states[300].mean)).toBeLessThan(1e-4);
    }
  });

  it('active: false zeroes the negative weights', () => {
    const p = cmaParameters(5, 10, false);
    expect(p.weights.slice(p.mu).every((w) => w === 0)).toBe(true);
  });
});

describe('CMA-ES invariances', () => {
  it('identical trajectories under order-preserving transforms of f (3f + 7, exp f): only ranks are used', () => {
    const d = 5, lambda = 8, gens = 60;
    const base = run(sphere, d, lambda, gens, 3).points;
    expect(run((x) => 3 * sphere(x) + 7, d, lambda, gens, 3).points).toEqual(base);
    expect(run((x) => Math.exp(sphere(x)), d, lambda, gens, 3).points).toEqual(base);
  });

  it('rotation invariance: f(x) from m0 = 0 and f(Rᵀx) from m0 = R·0 give the same f-sequence', () => {
    // With C0 = I and m0 = 0 the initial distribution is itself rotation invariant, but one seed
    // cannot make ask draw z for one run and Rz for the other. So the test samples z itself and hands
    // both runs their points: run A gets x = m + σ C^{1/2} z on f, run B gets x = m + σ C^{1/2} R z
    // on g(x) = f(Rᵀx). If the update is rotation equivariant (m_B = R m_A, C_B = R C_A Rᵀ, σ_B = σ_A),
    // then C_B^{1/2} R z = R C_A^{1/2} z, the points are x_B = R x_A and the f-values agree, generation
    // after generation. (Such points count as injected in both runs, so the same clipping applies.)
    const d = 6, lambda = 10, gens = 100;
    const R = rotation(d, 99);
    const g: F = (x) => ellipsoid(applyT(R, x));
    let a = start(d, lambda, 1);
    let b = start(d, lambda, 1);
    const rng = Rng.fromSeed(2024);
    for (let t = 0; t < gens; t++) {
      const zs = Array.from({ length: lambda }, () => Array.from(rng.normals(d)));
      const sample = (s: CmaesState, z: number[]): number[] => {
        const v = matVec(symSqrtm(fromRows(s.C)), z);
        return s.mean.map((m, i) => m + s.sigma * v[i]);
      };
      const batchA = zs.map((z) => sample(a, z)).map((x) => ({ x, y: ellipsoid(x) }));
      const batchB = zs.map((z) => sample(b, apply(R, z))).map((x) => ({ x, y: g(x) }));
      batchA.forEach((o, k) => expect(batchB[k].y).toBeCloseTo(o.y, Math.max(0, -Math.log10(o.y) + 7)));
      a = cmaes.tell(a, { batch: batchA, history: [] });
      b = cmaes.tell(b, { batch: batchB, history: [] });
      expect(b.sigma / a.sigma).toBeCloseTo(1, 9);
    }
    const Rm = apply(R, a.mean);
    b.mean.forEach((v, i) => expect(v).toBeCloseTo(Rm[i], 8));
    expect(ellipsoid(a.mean)).toBeLessThan(1e-4); // and it did optimise (measured after 100 generations: 4.3e-6)
  });
});

describe('CMA-ES convergence', () => {
  it('converges linearly on the 10-D sphere with default λ = 10, σ0 = 1', () => {
    // ln f(mean) per generation, least-squares slope over generations 30–150, 7 seeds.
    // Measured: −0.143 −0.135 −0.147 −0.158 −0.134 −0.171 −0.159 (median −0.147), i.e. f shrinks by
    // a factor 10 every ≈ 16 generations (160 evaluations), consistent with bench/cmaes.ts.
    const rates = Array.from({ length: 7 }, (_, seed) => {
      const { states } = run(sphere, 10, 10, 150, seed);
      return logSlope(states.slice(1).map((s) => sphere(s.mean)), 30);
    });
    expect(median(rates)).toBeGreaterThan(-0.19);
    expect(median(rates)).toBeLessThan(-0.11);
  });

  it('ask samples N(m, σ²C): empirical covariance after adaptation matches state.cov', () => {
    let s = start(3, 7, 5);
    for (let t = 0; t < 40; t++) s = step(s, ellipsoid).state;
    const { points } = cmaes.ask(s, NO_CTX, 20000);
    const d = 3;
    const mu = Array.from({ length: d }, (_, i) => points.reduce((acc, p) => acc + p[i], 0) / points.length);
    const scale = Math.sqrt(symEig(fromRows(s.cov)).values[d - 1]);
    for (let i = 0; i < d; i++) {
      expect(Math.abs(mu[i] - s.mean[i])).toBeLessThan(0.05 * scale); // 0.05 ≈ 7 standard errors
      for (let j = 0; j < d; j++) {
        const c = points.reduce((acc, p) => acc + (p[i] - mu[i]) * (p[j] - mu[j]), 0) / (points.length - 1);
        expect(Math.abs(c - s.cov[i][j])).toBeLessThan(0.05 * scale * scale);
      }
    }
  });
});

describe('CMA-ES service semantics', () => {
  it('a batch of size λ′ ≠ λ is a (μ/μ_w, λ′) update: same result as a state with λ = λ′', () => {
    const s10 = start(4, 10, 8);
    const s6 = { ...s10, batchSize: 6 };
    const { points, state } = cmaes.ask(s10, NO_CTX, 6);
    const batch = points.map((x) => ({ x, y: sphere(x) }));
    const t10 = cmaes.tell(state, { batch, history: batch });
    const t6 = cmaes.tell({ ...state, batchSize: 6 }, { batch, history: batch });
    expect({ ...t10, batchSize: 6 }).toEqual(t6);
    expect(t10.generation).toBe(s6.generation + 1);
  });

  it('a batch of one point keeps the distribution; a non-finite value is a typed error', () => {
    const s = start(3, 6, 1);
    const t = cmaes.tell(s, { batch: [{ x: [1, 2, 3], y: 4 }], history: [] });
    expect([t.mean, t.sigma, t.C, t.generation]).toEqual([s.mean, s.sigma, s.C, 1]);
    expect(() => cmaes.tell(s, { batch: [{ x: [0, 0, 0], y: NaN }, { x: [1, 0, 0], y: 1 }], history: [] })).toThrow(EngineError);
    expect(() => cmaes.tell(s, { batch: [], history: [] })).toThrow(EngineError);
  });

  it('a far injected (projected) point is clipped to Mahalanobis length √n + 2n/(n+2)', () => {
    const d = 4;
    const s = start(d, 8, 2);
    const { points, state } = cmaes.ask(s, NO_CTX, 8);
    const batch = points.map((x) => ({ x, y: sphere(x) }));
    batch[0] = { x: [1e6, 0, 0, 0], y: -1 }; // best, far away, never asked
    const t = cmaes.tell(state, { batch, history: batch });
    const cy = Math.sqrt(d) + (2 * d) / (d + 2);
    // C0 = I, so the mean step in σ units is Σ w_i y_i with every ‖y_i‖ ≤ c_y after clipping.
    expect(Math.hypot(...t.mean) / s.sigma).toBeLessThanOrEqual(cy + 1e-9);
    expect(t.sigma).toBeLessThan(10);
  });

  it('a genuinely asked point is used unclipped, even beyond √n + 2n/(n+2)', () => {
    const d = 2;
    const s = start(d, 6, 4, 1);
    const cy = Math.sqrt(d) + (2 * d) / (d + 2);
    // Ask many, keep five ordinary samples plus a long one (C = I, m = 0, σ = 1: length = ‖x‖).
    const { points, state } = cmaes.ask(s, NO_CTX, 400);
    const long = points.find((x) => Math.hypot(...x) > cy * 1.2)!;
    const chosen = [long, ...points.filter((x) => Math.hypot(...x) < cy).slice(0, 5)];
    const batch = chosen.map((x, k) => ({ x, y: k })); // the long one ranks best
    const asked = cmaes.tell(state, { batch, history: batch });
    const external = cmaes.tell({ ...state, asked: [] }, { batch, history: batch });
    // (41)–(42) by hand: m' = Σ_{i≤μ} w_i x_{i:λ} with m = 0, σ = 1, c_m = 1.
    const { weights, mu } = cmaParameters(d, 6);
    const m = [0, 1].map((j) => chosen.slice(0, mu).reduce((acc, x, i) => acc + weights[i] * x[j], 0));
    asked.mean.forEach((v, j) => expect(v).toBeCloseTo(m[j], 12));
    expect(external.mean).not.toEqual(asked.mean);
    expect(asked.asked).toEqual([]);
  });
});

const apply = (R: number[][], x: number[]): number[] => R.map((row) => row.reduce((s, r, j) => s + r * x[j], 0));
const applyT = (R: number[][], x: number[]): number[] => x.map((_, j) => R.reduce((s, row, i) => s + row[j] * x[i], 0));
