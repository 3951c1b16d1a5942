/**
 * Engine-level pins of the failures the API robustness tests (test/robustness/) found, each
 * reproduced without the server: the engine is driven the way the domain drives it, points handed
 * out after projection onto a box (in internal coordinates, where a diagonal prior makes the
 * bounds a box) and told back as the projected points.
 */
import { describe, expect, it } from 'vitest';
import { fromRows, getStrategy, resolveOptions, Rng, tryCholesky, type BaseState, type Observation } from '../../src/engine/index.js';
import { symEig } from '../../src/engine/linalg/index.js';
import { xnes, type XnesState } from '../../src/engine/strategies/xnes.js';
import { activeSet, standardise } from '../../src/engine/strategies/probnes-data.js';

/** λ_min / λ_max of a symmetric matrix. */
function inverseCondition(cov: number[][]): number {
  const { values } = symEig(fromRows(cov));
  return values[0] / values[values.length - 1];
}

/** Paths of every number in a plain JSON value that is not finite. */
function nonFiniteNumbers(v: unknown, path = ''): string[] {
  if (typeof v === 'number') return Number.isFinite(v) ? [] : [path];
  if (Array.isArray(v)) return v.flatMap((x, i) => nonFiniteNumbers(x, `${path}/${i}`));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => nonFiniteNumbers(x, `${path}/${k}`));
  return [];
}

function expectValidCov(cov: number[][], where: string): void {
  expect(cov.every((r) => r.every(Number.isFinite)), where).toBe(true);
  expect(tryCholesky(fromRows(cov)), `${where}: ${JSON.stringify(cov)}`).not.toBeNull();
}

/**
 * The generation loop of the domain with projection onto [lo, hi]^d: ask λ points, clamp them,
 * tell the clamped points with f of the clamped points. Returns every state after a tell.
 */
function runProjected(method: 'xnes', f: (x: number[]) => number, lo: number, hi: number, generations: number, seed: number): BaseState[] {
  const s = getStrategy(method);
  const d = 2;
  let st = s.init({ dim: d, batchSize: 3, options: resolveOptions(method, d) }, Rng.fromSeed(seed));
  const history: Observation[] = [];
  const states: BaseState[] = [];
  for (let g = 0; g < generations; g++) {
    const asked = s.ask(st, { history, pending: [] }, 3);
    st = asked.state;
    const batch = asked.points.map((u) => {
      const x = u.map((v) => Math.min(Math.max(v, lo), hi));
      return { x, y: f(x) };
    });
    history.push(...batch);
    st = s.tell(st, { batch, history });
    states.push(st);
  }
  return states;
}

describe('xnes: injected (projected) points', () => {
  const init = () => xnes.init({ dim: 2, batchSize: 3, options: resolveOptions('xnes', 2) }, Rng.fromSeed(1));
  // Hansen 2011 (arXiv:1110.4181): an injected point's Mahalanobis length is clipped to √d + 2d/(d+2).
  const cz = Math.sqrt(2) + (2 * 2) / (2 + 2);

  it('clips the Mahalanobis length of a point that was not asked to √d + 2d/(d+2)', () => {
    // At the initial state μ = 0, A = I, so z = x: a point at 1e6 and one at exactly c_z on the
    // same ray must give the same update once the first is clipped.
    const far = xnes.tell(init(), { batch: [{ x: [1e6, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [0, -1], y: 2 }], history: [] });
    const clipped = xnes.tell(init(), { batch: [{ x: [cz, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [0, -1], y: 2 }], history: [] });
    expect(far.A).toEqual(clipped.A);
    expect(far.mean).toEqual(clipped.mean);
    expectValidCov(far.cov, 'far point');
  });

  it('uses its own samples unclipped, recognised bit for bit', () => {
    const st: XnesState = { ...init(), asked: [[5, 0]] };
    const batch = [{ x: [5, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [0, -1], y: 2 }];
    const own = xnes.tell(st, { batch, history: batch });
    const injected = xnes.tell({ ...st, asked: [] }, { batch, history: batch });
    // An asked sample at ‖z‖ = 5 > c_z moves the mean by η_μ·u_best·5 along x; injected, by u_best·c_z.
    expect(own.mean[0] / injected.mean[0]).toBeCloseTo(5 / cz, 12);
    expect(own.asked).toEqual([]);
  });

  it('keeps Σ positive definite, with λ_min ≥ 1e-12 λ_max, when most samples are projected (60 generations at a cliff)', () => {
    // The 2-d cliff of the API scenario "spread-cliff" in internal units (prior std 2.5, box ±2σ):
    // 1e12·(1 + ‖x‖²) for x₀ > 0, 1e-6·‖x‖² otherwise. Before the floor, Σ reached a condition
    // number of 1e18 by generation 45 (seed 7) and stopped being positive definite.
    const f = (x: number[]) => (x[0] > 0 ? 1e12 * (1 + x[0] ** 2 + x[1] ** 2) : 1e-6 * (x[0] ** 2 + x[1] ** 2));
    for (const seed of [7, 8, 9]) {
      const states = runProjected('xnes', f, -2, 2, 60, seed);
      states.forEach((st, g) => {
        expectValidCov(st.cov, `seed ${seed} generation ${g}`);
        // The floor holds up to the rounding of A Aᵀ.
        expect(inverseCondition(st.cov), `seed ${seed} generation ${g}`).toBeGreaterThan(0.99e-12);
      });
    }
  });

  it('floors an already ill-conditioned A without turning the distribution', () => {
    // Σ = diag(1, 1e-16): condition 1e16. After one update the floor lifts λ_min to 1e-12 λ_max.
    const st: XnesState = { ...init(), A: [[1, 0], [0, 1e-8]], cov: [[1, 0], [0, 1e-16]], asked: [[0.5, 0], [-0.5, 1e-8], [0, -1e-8]] };
    const batch = [{ x: [0.5, 0], y: 0 }, { x: [-0.5, 1e-8], y: 1 }, { x: [0, -1e-8], y: 2 }];
    const next = xnes.tell(st, { batch, history: batch });
    expectValidCov(next.cov, 'floored');
    expect(inverseCondition(next.cov)).toBeGreaterThan(0.99e-12);
    // The large variance is what the unfloored update gives: only the small one is lifted.
    expect(next.cov[0][0]).toBeGreaterThan(0.1);
    expect(Math.abs(next.cov[0][1])).toBeLessThan(1e-6 * next.cov[0][0]);
  });
});

describe('standardisation of y (constant data, values near the top of the double range)', () => {
  it('is bit for bit the direct formula on ordinary data', () => {
    // ALGORITHM.md §1 step 2: ỹ = (y − mean)/std with the unbiased std.
    const y = [3.25, -1.5, 7.125, 0.1, 2e-3, 1234.5];
    const m = y.reduce((a, b) => a + b, 0) / y.length;
    const sd = Math.sqrt(y.reduce((a, b) => a + (b - m) ** 2, 0) / (y.length - 1));
    const st = standardise(y);
    expect(st.yMean).toBe(m);
    expect(st.yStd).toBe(sd);
    expect(st.yTilde).toEqual(y.map((v) => (v - m) / sd));
  });

  it('gives z = 0 exactly for identical values', () => {
    // 3.7·3/3 is not 3.7 in floating point: the computed mean alone would leave z ≈ ±1e-16.
    expect(standardise([3.7, 3.7, 3.7, 3.7, 3.7, 3.7, 3.7]).yTilde).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it.each(['prob-cmaes', 'prob-xnes', 'prob-snes'] as const)('%s: a constant objective leaves the mean exactly where it is (the mean stalls)', (method) => {
    const s = getStrategy(method);
    let st = s.init({ dim: 2, batchSize: 3, options: resolveOptions(method, 2, { candidates: 32 }) }, Rng.fromSeed(5));
    const history: Observation[] = [];
    for (let g = 0; g < 6; g++) {
      const asked = s.ask(st, { history, pending: [] }, 3);
      const batch = asked.points.map((x) => ({ x, y: 3.7 }));
      history.push(...batch);
      st = s.tell(asked.state, { batch, history });
      expect(st.mean, `generation ${g}`).toEqual([0, 0]);
      expectValidCov(st.cov, `generation ${g}`);
    }
  });

  it('stays finite where the squares overflow (values of 1e200)', () => {
    // y = [0, 1e200, 2e200]: mean 1e200, unbiased std √((1e400 + 0 + 1e400)/2) = 1e200, so z = [−1, 0, 1].
    const st = standardise([0, 1e200, 2e200]);
    expect(st.yTilde.map((v) => +v.toFixed(12))).toEqual([-1, 0, 1]);
    expect(st.yMean / 1e200).toBeCloseTo(1, 12);
    expect(st.yStd / 1e200).toBeCloseTo(1, 12);
  });

  it('keeps z exact and saturates std when the spread exceeds the double range (±1.7e308)', () => {
    // y = [−M, M]: mean 0, std √(2M²) = √2·M > MAX_VALUE, z = ∓1/√2.
    const M = 1.7e308;
    const st = standardise([-M, M]);
    expect(st.yTilde[0]).toBeCloseTo(-Math.SQRT1_2, 12);
    expect(st.yTilde[1]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(st.yMean).toBe(0);
    expect(st.yStd).toBe(Number.MAX_VALUE);
  });

  it.each(['prob-cmaes', 'bo'] as const)('%s: an update over values of ±1e308 is finite (it threw a GP-fit error before)', (method) => {
    const s = getStrategy(method);
    const d = 2;
    const opts = resolveOptions(method, d, method === 'bo' ? { candidates: 50, mc_samples: 16 } : { candidates: 32 });
    let st = s.init({ dim: d, batchSize: 3, options: opts, box: method === 'bo' ? { lower: [-2, -2], upper: [2, 2] } : null }, Rng.fromSeed(3));
    const history: Observation[] = [];
    for (let g = 0; g < 3; g++) {
      const asked = s.ask(st, { history, pending: [] }, 3);
      st = asked.state;
      const batch = asked.points.map((x) => ({ x, y: x[0] > 0 ? 1.7e308 : -1.7e308 / (1 + x[1] ** 2) }));
      history.push(...batch);
      st = s.tell(st, { batch, history });
      expect(st.mean.every(Number.isFinite), `generation ${g}`).toBe(true);
      expectValidCov(st.cov, `generation ${g}`);
      // Nothing in the state may be ∞ (it would not survive JSON): diagnostics are finite or null.
      expect(nonFiniteNumbers(st), `generation ${g}`).toEqual([]);
    }
  });
});

describe('ProbNES active set at the largest accepted quantile', () => {
  it('active_set_quantile = 1 (accepted by the ProbNES options) takes every point instead of throwing', () => {
    // The χ²_d quantile of 1 is +∞: every finite squared Mahalanobis distance is below it.
    const history = [{ x: [0, 0], y: 1 }, { x: [1e3, -1e3], y: 2 }, { x: [1e8, 0], y: 3 }];
    expect(activeSet(history, [0, 0], [[1, 0], [0, 1]], { enabled: true, quantile: 1, minSize: 1 })).toEqual([0, 1, 2]);
  });

  it('prob-cmaes: a whole update with active_set_quantile = 1 succeeds', () => {
    const s = getStrategy('prob-cmaes');
    const st = s.init({ dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2, { candidates: 16, active_set_quantile: 1 }) }, Rng.fromSeed(2));
    const asked = s.ask(st, { history: [], pending: [] }, 3);
    const batch = asked.points.map((x) => ({ x, y: x[0] ** 2 + x[1] ** 2 }));
    const next = s.tell(asked.state, { batch, history: batch });
    expect(next.diagnostics.n_active).toBe(3);
    expectValidCov(next.cov, 'after the update');
  });
});
