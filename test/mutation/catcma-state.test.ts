/**
 * CatCMA's state through cmaes (src/engine/strategies/catcma.ts): what init refuses, what ask
 * remembers, what a tell of too few points does, and the ASNG state carried from one generation to the
 * next (or made afresh for an imported state that lacks it). The numerical update itself is checked
 * against its definitions in test/engine/catcma.test.ts and test/mutation/catcma-asng.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { catUpdate, initCatCma } from '../../src/engine/strategies/catcma.js';
import { getStrategy, InvalidInputError, NonFiniteError, Rng, type BaseState } from '../../src/engine/index.js';
import type { CmaesState } from '../../src/engine/strategies/cma-core.js';

const cmaes = getStrategy('cmaes');
type Cat = BaseState & { asked: number[][]; categorical: number[][]; asng?: { Delta: number; gamma: number; s: number[] }; mean: number[] };
const init = (dim: number, batchSize: number, categories: number[][]) =>
  cmaes.init({ dim, batchSize, options: { sigma0: 1 }, categories }, Rng.fromSeed(3)) as Cat;

describe('CatCMA init', () => {
  it('refuses more categorical parameters than dimensions, and a batch that is not an integer ≥ 2', () => {
    expect(() => init(1, 4, [[0.5, 0.5], [0.5, 0.5]])).toThrow(/^cmaes: a mixed space needs categories and dim ≥ their number$/);
    // cmaes dispatches here only with categories; called directly without any, it refuses too.
    const numeric = cmaes.init({ dim: 2, batchSize: 4, options: { sigma0: 1 } }, Rng.fromSeed(3)) as CmaesState;
    expect(() => initCatCma({ dim: 2, batchSize: 4, options: {}, categories: [] }, numeric.params, numeric)).toThrow(InvalidInputError);
    // Categorical parameters only (with continuous ones, CMA-ES's own check says the same).
    expect(() => init(1, 1, [[0.5, 0.5]])).toThrow(/^cmaes: batch size must be an integer ≥ 2, got 1$/);
    expect(() => init(1, 2.5, [[0.5, 0.5]])).toThrow(/^cmaes: batch size must be an integer ≥ 2, got 2.5$/);
    // The smallest accepted: λ = 2, and as many dimensions as categorical parameters.
    expect(init(2, 2, [[0.5, 0.5], [0.25, 0.75]]).categorical).toHaveLength(2);
  });

  it('puts the initial q inside the margin (q_min = (1 − 0.73)/(K − 1) for one parameter), and keeps no continuous state without continuous coordinates', () => {
    const s = init(1, 4, [[0.01, 0.99]]);
    expect(s.categorical).toEqual([[0.27, 0.73]]);
    expect(s).toMatchObject({ mean: [], cov: [], C: [], p_sigma: [], p_c: [] });
  });

  it('starts ASNG at Δ = 1, γ = 0, s = 0 with one entry per free probability Σ_j (K_j − 1)', () => {
    expect(init(3, 4, [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5]]).asng).toEqual({ Delta: 1, gamma: 0, s: [0, 0, 0] });
  });
});

describe('CatCMA ask and tell', () => {
  it('ask remembers the continuous part of each point it hands out, after those of earlier asks', () => {
    const s0 = init(3, 4, [[0.5, 0.5]]);
    const a = cmaes.ask(s0, { history: [], pending: [] }, 2);
    const b = cmaes.ask(a.state, { history: [], pending: [] }, 1);
    expect((b.state as Cat).asked).toEqual([...a.points, ...b.points].map((p) => p.slice(0, 2)));
    a.points.forEach((p) => expect([0, 1]).toContain(p[2]));
    expect(() => cmaes.ask(s0, { history: [], pending: [] }, -1)).toThrow(/^cmaes: ask count/);
    expect(() => cmaes.tell(s0, { batch: [], history: [] })).toThrow(/^cmaes: tell needs at least one observation/);
  });

  it('takes a point it handed out at face value, and clips one it did not (injected) like CMA-ES', () => {
    // A far point, once as if asked, once not: CMA-ES clips an injected point's step to ‖C^{-1/2}y‖ ≤ c_y
    // (cma-core.ts), so the mean moves much less toward it.
    const s0 = init(3, 4, [[0.5, 0.5]]);
    const batch = [{ x: [40, 0, 1], y: 0 }, { x: [0.1, 0, 0], y: 1 }, { x: [0, 0.1, 0], y: 2 }, { x: [-0.1, 0, 1], y: 3 }];
    const asked = cmaes.tell({ ...s0, asked: batch.map((o) => o.x.slice(0, 2)) } as Cat, { batch, history: [] }) as Cat;
    const injected = cmaes.tell({ ...s0, asked: batch.slice(1).map((o) => o.x.slice(0, 2)) } as Cat, { batch, history: [] }) as Cat;
    expect(asked.mean[0]).toBeGreaterThan(10);
    expect(injected.mean[0]).toBeLessThan(5);
    expect(injected.mean[0]).toBeGreaterThan(0);
  });

  it('a tell of one point moves to the next generation and learns nothing; two points are enough to learn', () => {
    const s0 = init(2, 4, [[0.25, 0.25, 0.25, 0.25]]);
    const one = cmaes.tell(s0, { batch: [{ x: [0.1, 2], y: 1 }], history: [] }) as Cat;
    expect(one.generation).toBe(s0.generation + 1);
    expect(one.categorical).toEqual(s0.categorical);
    expect(one.mean).toEqual(s0.mean);
    expect(one.asked).toEqual([]);
    const two = cmaes.tell(s0, { batch: [{ x: [0.1, 2], y: 1 }, { x: [0.2, 0], y: 2 }], history: [] }) as Cat;
    expect(two.categorical[0]![2]).toBeGreaterThan(0.25);
    expect(two.categorical[0]![0]).toBeLessThan(0.25);
  });

  it('carries the ASNG state to the next update, and makes a fresh one for a state that lacks it', () => {
    const s0 = init(1, 4, [[0.25, 0.25, 0.25, 0.25]]);
    const batch = [{ x: [1], y: 0 }, { x: [1], y: 1 }, { x: [0], y: 2 }, { x: [3], y: 3 }];
    const ranked = [[1], [1], [0], [3]];
    const s1 = cmaes.tell(s0, { batch, history: [] }) as Cat;
    const byHand1 = catUpdate(s0.categorical, { Delta: 1, gamma: 0, s: [0, 0, 0] }, ranked);
    expect(s1.asng).toEqual(byHand1.asng);
    const s2 = cmaes.tell(s1, { batch, history: [] }) as Cat;
    expect(s2.asng).toEqual(catUpdate(s1.categorical, byHand1.asng, ranked).asng);
    // An imported state without ASNG (or with one of the wrong size) continues from the initial one.
    for (const asng of [undefined, { Delta: 3, gamma: 0.5, s: [0.1] }]) {
      const lacking = cmaes.tell({ ...s1, asng } as Cat, { batch, history: [] }) as Cat;
      expect(lacking.asng).toEqual(catUpdate(s1.categorical, { Delta: 1, gamma: 0, s: [0, 0, 0] }, ranked).asng);
    }
  });
});

describe('catUpdate on a q with a zero (never made by the margin; an imported state could hold it)', () => {
  it('refuses with a NonFiniteError instead of storing a NaN step size', () => {
    expect(() => catUpdate([[0, 1]], { Delta: 1, gamma: 0, s: [0] }, [[0], [1]])).toThrow(NonFiniteError);
    expect(() => catUpdate([[0, 1]], { Delta: 1, gamma: 0, s: [0] }, [[0], [1]])).toThrow(/^cmaes: categorical update became non-finite$/);
  });
});

describe('catUpdate without free probabilities', () => {
  it('a parameter with a single choice has nothing to learn: q and the ASNG state come back unchanged (copies)', () => {
    const q = [[1]];
    const asng = { Delta: 2, gamma: 0.3, s: [] };
    const out = catUpdate(q, asng, [[0], [0], [0]]);
    expect(out).toEqual({ q: [[1]], asng: { Delta: 2, gamma: 0.3, s: [] } });
    expect(out.q[0]).not.toBe(q[0]);
    expect(out.asng.s).not.toBe(asng.s);
  });
});
