/**
 * The model's optimum as a batch point (strategies/probnes-optimum.ts; docs/ALGORITHM.md §24).
 * Expected values: the unconstrained maximiser of bᵀ(u − c) + (u − c)ᵀA(u − c), A negative definite,
 * is c − ½A⁻¹b (set the gradient b + 2A(u − c) to zero); on the boundary the trust-region solution is
 * checked against a dense scan of the circle ‖x‖ = ρ (the maximum of a function on a circle, to the
 * scan's resolution), and against the optimality conditions of Nocedal & Wright 2006, Theorem 4.1.
 */
import { describe, expect, it } from 'vitest';
import { modelOptimumPoint, trustRegionMaximiser } from '../../src/engine/strategies/probnes-optimum.js';
import { fitModel as fitSurrogate, gradientAndHessian, maxModelSize } from '../../src/engine/surrogate/quadratic.js';
import { evalQuadratic } from '../../src/engine/gp/basis.js';
import { Rng } from '../../src/engine/random/index.js';
import { resolveOptions } from '../../src/engine/strategies/registry.js';
import { probCmaes } from '../../src/engine/strategies/prob-cmaes.js';
import { updateOptimumRadius, type ProbnesState } from '../../src/engine/strategies/probnes-core.js';
import type { Observation } from '../../src/engine/strategies/types.js';
import { resolveProbnesParams } from '../../src/engine/strategies/probnes-params.js';

const paramsOf = (profile: string) => resolveProbnesParams('prob-cmaes', { learningRateCov: 0.5, optimumRadius: 3 }, { profile }, 2);

const A = [[-2, 0.5], [0.5, -1]];
const b = [1, -0.5];
const Ainv = [[-1 / 1.75, -0.5 / 1.75], [-0.5 / 1.75, -2 / 1.75]]; // det A = 1.75
const optimum = [0, 1].map((i) => -0.5 * (Ainv[i][0] * b[0] + Ainv[i][1] * b[1]));
const q = (g: number[], H: number[][], x: number[]) => g[0] * x[0] + g[1] * x[1] + x[0] * (H[0][0] * x[0] + H[0][1] * x[1]) + x[1] * (H[1][0] * x[0] + H[1][1] * x[1]);

/** The best value of gᵀx + xᵀHx on the circle of radius r, by a scan of 100 000 angles. */
function circleMax(g: number[], H: number[][], r: number): number {
  let best = -Infinity;
  for (let k = 0; k < 100_000; k++) {
    const t = (2 * Math.PI * k) / 100_000;
    best = Math.max(best, q(g, H, [r * Math.cos(t), r * Math.sin(t)]));
  }
  return best;
}

describe('trust-region maximiser of a quadratic', () => {
  it('inside the region: the Newton point of a concave quadratic', () => {
    const x = trustRegionMaximiser(b, A, 10);
    x.forEach((v, i) => expect(v).toBeCloseTo(optimum[i], 10));
  });

  it('concave, Newton point outside: on the boundary, at the circle scan\'s maximum', () => {
    const r = 0.2;
    expect(Math.hypot(...optimum)).toBeGreaterThan(r);
    const x = trustRegionMaximiser(b, A, r);
    expect(Math.hypot(...x)).toBeCloseTo(r, 9);
    expect(q(b, A, x)).toBeGreaterThanOrEqual(circleMax(b, A, r) - 1e-9);
  });

  it('indefinite and convex models: on the boundary, at the circle scan\'s maximum', () => {
    for (const H of [[[-1, 0.3], [0.3, 2]], [[1, 0.2], [0.2, 0.5]]]) {
      const x = trustRegionMaximiser([0.3, -0.7], H, 1.5);
      expect(Math.hypot(...x)).toBeCloseTo(1.5, 9);
      expect(q([0.3, -0.7], H, x)).toBeGreaterThanOrEqual(circleMax([0.3, -0.7], H, 1.5) - 1e-9);
    }
  });

  it('hard case (g orthogonal to the rising direction): still on the boundary, at the maximum', () => {
    const H = [[1, 0], [0, -1]]; // rises along e1, g has no e1 component
    const x = trustRegionMaximiser([0, 0.5], H, 2);
    expect(Math.hypot(...x)).toBeCloseTo(2, 9);
    expect(q([0, 0.5], H, x)).toBeGreaterThanOrEqual(circleMax([0, 0.5], H, 2) - 1e-9);
  });
});

describe('modelOptimumPoint', () => {
  const quad = { centre: [0.5, -0.5], a0: 0.3, b, A };
  it('maps the whitened solution back: the quadratic\'s maximiser c − ½A⁻¹b when it lies in the region', () => {
    const u = modelOptimumPoint(quad, [0, 0], [[4, 1], [1, 2]], 10, null);
    u.forEach((v, i) => expect(v).toBeCloseTo(quad.centre[i] + optimum[i], 9));
  });

  it('with a small region: Mahalanobis distance ρ under Σ, and no better point on that ellipse', () => {
    const cov = [[0.04, 0.01], [0.01, 0.02]];
    const r = 0.5;
    const u = modelOptimumPoint(quad, [0, 0], cov, r, null);
    // Σ⁻¹ of a 2×2 matrix by hand.
    const det = cov[0][0] * cov[1][1] - cov[0][1] ** 2;
    const inv = [[cov[1][1] / det, -cov[0][1] / det], [-cov[0][1] / det, cov[0][0] / det]];
    const maha = (x: number[]) => Math.sqrt(x[0] * (inv[0][0] * x[0] + inv[0][1] * x[1]) + x[1] * (inv[1][0] * x[0] + inv[1][1] * x[1]));
    expect(maha(u)).toBeCloseTo(r, 8);
    const L = [[0.2, 0], [0.05, Math.sqrt(0.02 - 0.0025)]]; // Cholesky of cov
    let best = -Infinity;
    for (let k = 0; k < 20_000; k++) {
      const t = (2 * Math.PI * k) / 20_000, x = [r * Math.cos(t), r * Math.sin(t)];
      best = Math.max(best, evalQuadratic(quad, [L[0][0] * x[0], L[1][0] * x[0] + L[1][1] * x[1]]));
    }
    expect(evalQuadratic(quad, u)).toBeGreaterThanOrEqual(best - 1e-9);
  });

  it('projects onto the bounds', () => {
    const u = modelOptimumPoint(quad, [0, 0], [[4, 1], [1, 2]], 10, { lower: [null, -0.1], upper: [0.5, null] });
    expect(u[0]).toBeLessThanOrEqual(0.5);
    expect(u[1]).toBeGreaterThanOrEqual(-0.1);
  });
});

describe('inject_optimum in ask', () => {
  // A rotated ill-conditioned quadratic: after 3 generations of q = 3 (9 points) the mean is the full quadratic.
  const f = (x: number[]) => (x[0] + x[1] - 1) ** 2 + 30 * (x[0] - x[1]) ** 2;
  function afterGenerations(options: Record<string, boolean | number | string>, gens: number): ProbnesState {
    // The natural-gradient generations (§24), without the start phase of §29.
    let s = probCmaes.init({ dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2, { start_phase: 'off', ...options }) }, Rng.fromSeed(3));
    const history: Observation[] = [];
    for (let g = 0; g < gens; g++) {
      const a = probCmaes.ask(s, { history, pending: [] }, 3);
      const batch = a.points.map((x) => ({ x, y: f(x) }));
      history.push(...batch);
      s = probCmaes.tell(a.state, { batch, history: history.slice() });
    }
    return s;
  }

  it('the batch is μ, the model optimum, then the BQ point; without the option, no such point', () => {
    const s = afterGenerations({ inject_optimum: 'basis' }, 3);
    expect(s.gp?.basis).toBe('full');
    const expected = modelOptimumPoint(s.gp!.quad!, s.mean, s.cov, s.params.optimumRadius, null);
    const pts = probCmaes.ask(s, { history: [], pending: [] }, 3).points;
    expect(pts[0]).toEqual(s.mean);
    pts[1].forEach((v, i) => expect(v).toBeCloseTo(expected[i], 12));
    const off = probCmaes.ask({ ...s, params: { ...s.params, injectOptimum: 'off' } }, { history: [], pending: [] }, 3).points;
    expect(off.some((p) => p.every((v, i) => Math.abs(v - expected[i]) < 1e-9))).toBe(false);
  });

  it('no injection while the mean is not quadratic, nor in a batch of two (μ and one BQ point)', () => {
    const early = afterGenerations({ inject_optimum: 'basis' }, 1);
    expect(early.gp?.basis).not.toBe('full');
    const off = afterGenerations({ inject_optimum: 'off' }, 1);
    expect(probCmaes.ask(early, { history: [], pending: [] }, 3).points).toEqual(probCmaes.ask({ ...off, params: early.params }, { history: [], pending: [] }, 3).points);
    const s = afterGenerations({ inject_optimum: 'basis' }, 3);
    const two = probCmaes.ask(s, { history: [], pending: [] }, 2).points;
    const expected = modelOptimumPoint(s.gp!.quad!, s.mean, s.cov, s.params.optimumRadius, null);
    expect(two[1].every((v, i) => Math.abs(v - expected[i]) < 1e-9)).toBe(false);
  });

  it('weighted: the point is the trust-region maximiser of −f̂, f̂ lq-CMA-ES\'s rank-weighted quadratic of the recent points', () => {
    const history: Observation[] = [];
    let s = probCmaes.init({ dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2, { inject_optimum: 'weighted', start_phase: 'off' }) }, Rng.fromSeed(3));
    for (let g = 0; g < 3; g++) {
      const a = probCmaes.ask(s, { history, pending: [] }, 3);
      const batch = a.points.map((x) => ({ x, y: f(x) }));
      history.push(...batch);
      s = probCmaes.tell(a.state, { batch, history: history.slice() });
    }
    const model = fitSurrogate(history.slice(-maxModelSize(2, 3)), 2);
    expect(model.kind).not.toBe('linear');
    const { c, b: lin, H } = gradientAndHessian(model, 2);
    const neg = { centre: model.xBest, a0: -c, b: lin.map((v) => -v), A: H.map((r) => r.map((v) => -v)) };
    const expected = modelOptimumPoint(neg, s.mean, s.cov, s.params.optimumRadius, null);
    const pts = probCmaes.ask(s, { history, pending: [] }, 3).points;
    pts[1].forEach((v, i) => expect(v).toBeCloseTo(expected[i], 12));
  });

  it('no injection while the GP mean kept the constant basis, even with enough points for the quadratic', () => {
    const s = afterGenerations({ inject_optimum: 'weighted' }, 3);
    expect(s.gp!.X.length).toBeGreaterThanOrEqual(9);
    const constant: ProbnesState = { ...s, gp: { ...s.gp!, quad: null, basis: 'constant' } };
    const withConstant = probCmaes.ask(constant, { history: [], pending: [] }, 3).points;
    const off = probCmaes.ask({ ...constant, params: { ...constant.params, injectOptimum: 'off' } }, { history: [], pending: [] }, 3).points;
    expect(withConstant).toEqual(off);
  });

  it('is weighted in the default profile and off in the paper profile', () => {
    expect(paramsOf('default').injectOptimum).toBe('weighted');
    expect(paramsOf('paper').injectOptimum).toBe('off');
  });
});

describe('optimum_radius_max: the adaptive trust radius of the model optimum (ALGORITHM.md §24)', () => {
  // Rule of Nocedal & Wright 2006, Algorithm 4.1, with the success test "better than every value before".
  it('doubles up to the cap after a success, halves back to ρ₀ (not below) after a failure, keeps ρ without a point', () => {
    expect(updateOptimumRadius(2, 2, 8, true)).toBe(4);
    expect(updateOptimumRadius(4, 2, 8, true)).toBe(8);
    expect(updateOptimumRadius(8, 2, 8, true)).toBe(8);
    expect(updateOptimumRadius(8, 2, 8, false)).toBe(4);
    expect(updateOptimumRadius(2, 2, 8, false)).toBe(2);
    expect(updateOptimumRadius(4, 2, 8, null)).toBe(4);
  });

  // f decreasing along x₀ without bound near the start: the model optimum on the trust boundary improves.
  const slope = (x: number[]) => -10 * x[0] + 0.1 * x[1] ** 2 + 0.05 * x[0] ** 2;
  function run(options: Record<string, boolean | number | string>, gens: number): { s: ProbnesState; radii: number[] } {
    let s = probCmaes.init({ dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2, options) }, Rng.fromSeed(3));
    const history: Observation[] = [];
    const radii: number[] = [];
    for (let g = 0; g < gens; g++) {
      const a = probCmaes.ask(s, { history, pending: [] }, 3);
      const batch = a.points.map((x) => ({ x, y: slope(x) }));
      history.push(...batch);
      s = probCmaes.tell(a.state, { batch, history: history.slice() });
      radii.push(s.optimumRadius);
    }
    return { s, radii };
  }

  it('a study whose model optimum keeps improving widens the radius; without the option it stays ρ₀ and the state has no radius', () => {
    const { radii } = run({ optimum_radius: 2, optimum_radius_max: 8 }, 8);
    expect(Math.max(...radii)).toBeGreaterThan(2);
    expect(radii.every((r) => r >= 2 && r <= 8)).toBe(true);
    const fixed = run({ optimum_radius: 2 }, 8);
    expect(fixed.radii.every((r) => r === 2)).toBe(true);
    expect(fixed.s.optimumAsked).toBeNull();
    expect(paramsOf('paper').optimumRadiusMax).toBe(0);
    // The default profile's ρ₀ (BBOB ablation, docs/BENCHMARKS.md); the paper profile never injects.
    expect(probCmaes.init({ dim: 2, batchSize: 3, options: {} }, Rng.fromSeed(1)).params.optimumRadius).toBe(3);
    expect(probCmaes.init({ dim: 2, batchSize: 3, options: { profile: 'paper' } }, Rng.fromSeed(1)).params.injectOptimum).toBe('off');
  });

  it('ρ_t survives a JSON round trip of the state (version-1 states without it: test/engine/state-migrations.test.ts)', () => {
    const { s } = run({ optimum_radius: 2, optimum_radius_max: 8 }, 4);
    const restored = JSON.parse(JSON.stringify(s)) as ProbnesState;
    expect(restored.optimumRadius).toBe(s.optimumRadius);
  });
});
