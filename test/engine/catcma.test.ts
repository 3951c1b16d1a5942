/**
 * CatCMA (src/engine/strategies/catcma.ts): the Fisher-norm step against its definition, the weights,
 * the margin, and whole runs on mixed problems (seeded): the categorical distribution concentrates on
 * the best choice and never goes below the margin; numeric CMA-ES is untouched (cmaes.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { catUpdate, catWeights } from '../../src/engine/strategies/catcma.js';
import { marginFloor } from '../../src/engine/distributions/categorical.js';
import { getStrategy, Rng, type BaseState, type Observation } from '../../src/engine/index.js';

describe('CatCMA categorical update', () => {
  it('weights: the best ⌊λ/2⌋ positive and decreasing, summing to 1; the rest 0', () => {
    const w = catWeights(7);
    expect(w.slice(3).every((v) => v === 0)).toBe(true);
    expect(w[0]).toBeGreaterThan(w[1]!);
    expect(w[2]).toBeGreaterThan(0);
    expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 15);
  });

  it('the step has Fisher length δ: Σ_a ĝ_a²/q_a (the natural gradient\'s squared Fisher norm, = ĝ_θᵀ F ĝ_θ) scaled by ε² is δ²', () => {
    // One parameter, K = 4, no margin in the way (q well inside the simplex, a small step).
    const q = [[0.3, 0.25, 0.25, 0.2]];
    const ranked = [[2], [2], [0], [1], [3], [3]];
    const out = catUpdate(q, { Delta: 10, gamma: 0, s: [0, 0, 0] }, ranked);
    const step = out.q[0]!.map((v, a) => v - q[0]![a]!);
    // ĝ_θᵀ F ĝ_θ with F = diag(1/θ) + 11ᵀ/q_K equals Σ_a Δq_a²/q_a over all K entries (Σ Δq = 0).
    const fisher = step.reduce((acc, d, a) => acc + (d * d) / q[0]![a]!, 0);
    expect(Math.sqrt(fisher)).toBeCloseTo(1 / 10, 10); // δ = δ_init/Δ = 1/10 (the margin, 0.09, is not reached)
    out.q[0]!.forEach((v) => expect(v).toBeGreaterThan(marginFloor(4, 1)));
    expect(out.q[0]!.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
  });

  it('moves probability toward the choices of the best points and keeps every choice above the margin', () => {
    let q = [[0.25, 0.25, 0.25, 0.25]];
    let asng = { Delta: 1, gamma: 0, s: [0, 0, 0] };
    for (let g = 0; g < 60; g++) {
      const r = catUpdate(q, asng, [[1], [1], [0], [2], [3], [3]]);
      q = r.q;
      asng = r.asng;
    }
    const floor = marginFloor(4, 1);
    expect(q[0]![1]).toBeCloseTo(1 - 3 * floor, 6);
    q[0]!.forEach((v) => expect(v).toBeGreaterThanOrEqual(floor - 1e-12));
  });
});

describe('cmaes with categorical parameters (CatCMA)', () => {
  const run = (dim: number, categories: number[][], f: (x: number[]) => number, generations: number) => {
    const s = getStrategy('cmaes');
    let state: BaseState = s.init({ dim, batchSize: 8, options: { sigma0: 1, active: true }, categories }, Rng.fromSeed(21));
    const history: Observation[] = [];
    for (let g = 0; g < generations; g++) {
      const a = s.ask(state, { history: [], pending: [] }, 8);
      state = a.state;
      const batch = a.points.map((x) => ({ x, y: f(x) }));
      history.push(...batch);
      state = s.tell(state, { batch, history: [...history] });
      expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    }
    return { state, history };
  };

  it('solves a sphere with two categorical parameters: the best choices dominate q, the mean reaches the optimum', () => {
    const f = (x: number[]) => (x[0]! - 1) ** 2 + (x[1]! + 0.5) ** 2 + (x[2] === 3 ? 0 : 1) + (x[3] === 0 ? 0 : 0.5);
    const { state } = run(4, [[0.25, 0.25, 0.25, 0.25], [0.5, 0.5]], f, 60);
    expect(state.mean[0]).toBeCloseTo(1, 2);
    expect(state.mean[1]).toBeCloseTo(-0.5, 2);
    const q = state.categorical!;
    expect(q[0]![3]).toBeGreaterThan(0.8);
    expect(q[1]![0]).toBeGreaterThan(0.8);
    q.forEach((row) => row.forEach((v) => expect(v).toBeGreaterThanOrEqual(marginFloor(row.length, 2) - 1e-12)));
  });

  it('runs without continuous coordinates (categorical parameters only)', () => {
    const f = (x: number[]) => (x[0] === 2 ? 0 : 1) + (x[1] === 1 ? 0 : 1);
    const { state, history } = run(2, [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5]], f, 30);
    expect(state.mean).toEqual([]);
    expect(Math.min(...history.map((o) => o.y))).toBe(0);
    expect(state.categorical![0]![2]).toBeGreaterThan(0.6);
  });
});
