/**
 * The ProbNES methods with categorical parameters (src/engine/strategies/probnes-mixed.ts): on a
 * mixed problem whose best choices are known, each method's categorical distribution concentrates on
 * them (down to the margin elsewhere) and μ reaches the continuous optimum (seeded runs); states are
 * plain JSON and a JSON round trip continues identically; categorical parameters alone work. The
 * closed forms the updates use are checked against Monte Carlo in mixed-quadrature.test.ts, and
 * numeric studies are unchanged (bench/probnes-speed.ts --check).
 */
import { describe, expect, it } from 'vitest';
import { getStrategy, Rng, type BaseState, type MethodName, type Observation } from '../../src/engine/index.js';
import { marginFloor } from '../../src/engine/distributions/categorical.js';

const f = (x: number[]) => (x[0]! - 1) ** 2 + (x[1]! + 0.5) ** 2 + (x[2] === 2 ? 0 : 2) + (x[3] === 0 ? 0 : 1);

function run(method: MethodName, dim: number, categories: number[][], g: (x: number[]) => number, generations: number, roundTrip = false) {
  const s = getStrategy(method);
  let state: BaseState = s.init({ dim, batchSize: 6, options: s.defaults(dim, 'default'), box: { lower: new Array(dim).fill(-3), upper: new Array(dim).fill(3) }, categories }, Rng.fromSeed(4));
  const history: Observation[] = [];
  const rt = (st: BaseState) => (roundTrip ? (JSON.parse(JSON.stringify(st)) as BaseState) : st);
  for (let k = 0; k < generations; k++) {
    const a = s.ask(rt(state), { history: [...history], pending: [] }, 6);
    state = a.state;
    const batch = a.points.map((x) => ({ x, y: g(x) }));
    history.push(...batch);
    state = s.tell(rt(state), { batch, history: [...history] });
  }
  return { state, history };
}

describe.each(['prob-cmaes', 'prob-xnes', 'prob-snes'] as const)('%s with categorical parameters', (method) => {
  it('concentrates q on the best choices (the others at the margin) and moves μ to the continuous optimum', () => {
    const { state, history } = run(method, 4, [[0.25, 0.25, 0.25, 0.25], [0.5, 0.5]], f, 12);
    const q = state.categorical!;
    expect(q[0]![2]).toBeCloseTo(1 - 3 * marginFloor(4, 2), 6);
    expect(q[1]![0]).toBeCloseTo(1 - marginFloor(2, 2), 6);
    expect(state.mean[0]).toBeCloseTo(1, 1);
    expect(state.mean[1]).toBeCloseTo(-0.5, 1);
    expect(Math.min(...history.map((o) => o.y))).toBeLessThan(0.05);
    expect(state.diagnostics.n_active).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    const est = getStrategy(method).estimate!(state, history);
    expect(est.predicted).not.toBeNull();
  });

  it('continues identically through a JSON round trip of its state at every call', () => {
    const a = run(method, 3, [[0.2, 0.3, 0.5]], (x) => (x[0]! - 0.3) ** 2 + (x[1]! - 0.1) ** 2 + (x[2] === 1 ? 0 : 1), 4);
    const b = run(method, 3, [[0.2, 0.3, 0.5]], (x) => (x[0]! - 0.3) ** 2 + (x[1]! - 0.1) ** 2 + (x[2] === 1 ? 0 : 1), 4, true);
    expect(b.history).toEqual(a.history);
  });
});

it('prob-cmaes with categorical parameters only (no continuous coordinate)', () => {
  const g = (x: number[]) => (x[0] === 1 ? 0 : 1) + (x[1] === 2 ? 0 : 1);
  const { state, history } = run('prob-cmaes', 2, [[0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], g, 8);
  expect(state.mean).toEqual([]);
  expect(Math.min(...history.map((o) => o.y))).toBe(0);
  expect(state.categorical![1]![2]).toBeGreaterThan(0.5);
});
