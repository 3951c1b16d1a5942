/**
 * The strategies that search categorical coordinates (InitSpec.categories): random draws choices from
 * their prior (seeded frequencies within 5 binomial standard errors) and draws exactly as before
 * without categories; BO and πBO on a mixed space find the best choice of a problem where one choice is
 * clearly better, keep their state plain JSON, and never hand out an index outside a parameter's range.
 */
import { describe, expect, it } from 'vitest';
import { getStrategy, Rng, type BaseState, type InitSpec, type MethodName, type Observation } from '../../src/engine/index.js';

const spec = (method: MethodName, dim: number, categories?: number[][]): InitSpec => ({
  dim,
  batchSize: 1,
  options: method === 'random' ? {} : { candidates: 300, mc_samples: 32 },
  box: { lower: new Array(dim).fill(-3), upper: new Array(dim).fill(3) },
  ...(categories ? { categories } : {}),
});

describe('random with categorical coordinates', () => {
  it('without categories it draws exactly the normals it drew before (no extra draw)', () => {
    const s = getStrategy('random');
    const st = s.init(spec('random', 3), Rng.fromSeed(9));
    const { points } = s.ask(st, { history: [], pending: [] }, 4);
    const ref = Rng.fromSeed(9);
    expect(points).toEqual(Array.from({ length: 4 }, () => Array.from(ref.normals(3))));
    expect(st.categorical).toBeUndefined();
  });

  it('draws each choice with its prior probability (10⁴ draws, 5 standard errors)', () => {
    const s = getStrategy('random');
    const q = [0.6, 0.3, 0.1];
    const st = s.init(spec('random', 3, [q, [0.5, 0.5]]), Rng.fromSeed(2));
    expect(st.mean).toHaveLength(1);
    const N = 10_000;
    const { points } = s.ask(st, { history: [], pending: [] }, N);
    const counts = [0, 0, 0];
    for (const p of points) {
      expect(p).toHaveLength(3);
      counts[p[1]!]!++;
      expect([0, 1]).toContain(p[2]);
    }
    q.forEach((p, a) => expect(Math.abs(counts[a]! / N - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / N)));
  });
});

/** f(u, c) = 0.1·‖u − 0.5‖² + 2·[c_0 ≠ 2] + [c_1 ≠ 0]: best choices (2, 0). */
const f = (x: number[]) => 0.1 * ((x[0]! - 0.5) ** 2 + (x[1]! - 0.5) ** 2) + (x[2] === 2 ? 0 : 2) + (x[3] === 0 ? 0 : 1);

describe.each(['bo', 'pibo'] as const)('%s on a mixed space', (method) => {
  it('finds the best choices within 20 evaluations and keeps a JSON-plain state', () => {
    const s = getStrategy(method);
    let state: BaseState = s.init(spec(method, 4, [[0.25, 0.25, 0.25, 0.25], [0.5, 0.5]]), Rng.fromSeed(4));
    const history: Observation[] = [];
    for (let g = 0; g < 20; g++) {
      const asked = s.ask(state, { history: [...history], pending: [] }, 1);
      state = asked.state;
      const x = asked.points[0]!;
      expect(Number.isInteger(x[2]) && x[2]! >= 0 && x[2]! < 4).toBe(true);
      expect(Number.isInteger(x[3]) && x[3]! >= 0 && x[3]! < 2).toBe(true);
      const o = { x, y: f(x) };
      history.push(o);
      state = s.tell(state, { batch: [o], history: [...history] });
      expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    }
    const best = history.reduce((a, b) => (b.y < a.y ? b : a));
    expect([best.x[2], best.x[3]]).toEqual([2, 0]);
    expect(best.y).toBeLessThan(0.2);
    // A batch with pending points (the Monte Carlo q-EI steps) also hands out valid choices.
    const asked = s.ask(state, { history, pending: [[0, 0, 1, 1]] }, 3);
    for (const x of asked.points) expect(x[2]! >= 0 && x[2]! < 4 && x[3]! >= 0 && x[3]! < 2).toBe(true);
  });

  it('a study of categorical parameters only (no continuous coordinate) works', () => {
    const s = getStrategy(method);
    let state: BaseState = s.init({ dim: 2, batchSize: 1, options: { candidates: 100, mc_samples: 16 }, categories: [[0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]] }, Rng.fromSeed(1));
    const history: Observation[] = [];
    const g = (x: number[]) => (x[0] === 1 ? 0 : 1) + (x[1] === 2 ? 0 : 1);
    for (let k = 0; k < 12; k++) {
      const a = s.ask(state, { history: [...history], pending: [] }, 1);
      state = a.state;
      const o = { x: a.points[0]!, y: g(a.points[0]!) };
      history.push(o);
      state = s.tell(state, { batch: [o], history: [...history] });
    }
    expect(Math.min(...history.map((o) => o.y))).toBe(0);
  });
});
