/**
 * xNES, SNES and lq-CMA-ES on spaces with categorical (and conditional) parameters
 * (src/engine/strategies/es-categorical.ts; ALGORITHM.md §27, §30), and their numeric studies
 * unchanged.
 *
 * - Numeric studies continue bit for bit: seeded trajectories (points and final state) of each method,
 *   and of CatCMA, hashed and compared with digests recorded with the code of commit 1533e61, before
 *   these methods searched categorical parameters.
 * - The categorical distribution concentrates on the best choice where the prior favours the worst:
 *   plain, f = (u0 − 0.5)² + (u1 + 0.3)² + [1, 0.5, 0][c] with prior q = [0.7, 0.2, 0.1] (the known
 *   optimum: c = 2, u = (0.5, −0.3), f = 0); conditional, an SVC-like space, c ∈ {linear, poly, rbf}
 *   with prior [0.6, 0.2, 0.2], u0 = C always active, u1 = γ only for rbf, u2 = degree only for poly,
 *   f = 0.2 (C − 0.5)² + {linear: 0.4, poly: 0.3 + 0.2 (degree − 1)², rbf: 0.25 (γ − 1.5)²} (the
 *   optimum: rbf at C = 0.5, γ = 1.5, f = 0; the others are ≥ 0.3). Batches of 6, seeds 1–6. These
 *   assertions fail with the categorical update removed (q then stays at the prior's margin-floored
 *   probabilities, whose mode is the worst choice or linear).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getStrategy, resolveOptions, Rng, type BaseState, type MethodName, type Observation } from '../../src/engine/index.js';
import { catUpdate } from '../../src/engine/strategies/catcma.js';
import { marginFloor, modeOf } from '../../src/engine/distributions/categorical.js';
import { orderBestFirst } from '../../src/engine/strategies/es-utils.js';
import { mixedInitSpec, PLAIN, SVC, type MixedTask } from '../helpers/mixed-tasks.js';

const sha = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');

/** A seeded run of 25 generations of 6 on f(x) = Σ (i + 1)(x_i − 0.3 i)², the points clipped to [−1, 0.5] when `box`. */
function trajectory(method: MethodName, seed: number, dim: number, box: boolean, categories?: number[][]): string {
  const s = getStrategy(method);
  const lo = box ? -1 : -Infinity, hi = box ? 0.5 : Infinity;
  const dc = dim - (categories?.length ?? 0);
  const f = (x: number[]) => x.reduce((acc, v, i) => acc + (i + 1) * (v - 0.3 * i) ** 2, 0);
  let st: BaseState = s.init({ dim, batchSize: 6, options: resolveOptions(method, dim), box: box ? { lower: new Array(dim).fill(-1), upper: new Array(dim).fill(0.5) } : null, ...(categories ? { categories } : {}) }, Rng.fromSeed(seed));
  const history: Observation[] = [];
  const points: number[][] = [];
  for (let g = 0; g < 25; g++) {
    const a = s.ask(st, { history: [...history], pending: [] }, st.generationSize ?? st.batchSize);
    st = a.state;
    const batch = a.points.map((x) => ({ x: x.map((v, i) => (i < dc ? Math.min(hi, Math.max(lo, v)) : v)), y: f(x) }));
    points.push(...a.points);
    history.push(...batch);
    st = s.tell(st, { batch, history: [...history] });
  }
  return sha([points, st]);
}

describe('numeric studies are unchanged', () => {
  /** Recorded with the code of commit 1533e61 (before xNES, SNES and lq-CMA-ES took categorical parameters). */
  const BEFORE: Record<string, string> = {
    xnes: 'd6f630d8a5608fb66e906a3b7260e854dd3c9a726990a351408b34a80d91ba55',
    snes: '91f4918b23626a842f10a710a9135b93738d809683b1668f0a4282fc123538ef',
    'lq-cmaes': '8806de90b23c783f5db3e031d6f1898c7d865688d4b3c954490aadd18a9c90b0',
    cmaes: 'a4f1e0e4bd69afcdc1d1be801307a1494a48bd3d0215dbbe54738fb42185356b',
  };
  it.each(Object.keys(BEFORE))('%s: the same points and states, bit for bit (2 seeds × d ∈ {1, 3} × with and without a box)', (method) => {
    const runs: string[] = [];
    for (const seed of [1, 2]) for (const dim of [1, 3]) for (const box of [false, true]) runs.push(trajectory(method as MethodName, seed, dim, box));
    expect(sha(runs)).toBe(BEFORE[method]);
  });
  it('CatCMA (cmaes with categorical parameters), whose categorical update the others share, is unchanged', () => {
    expect(sha([1, 2].map((seed) => trajectory('cmaes', seed, 4, false, [[0.5, 0.3, 0.2], [0.5, 0.5]])))).toBe('3c47b4cfa80a1764dacf2ede17fc4066e9c03dbbe1d944097cef67644e663fa6');
  });
});

/** A seeded run of `evaluations` evaluations in generations of the method's size (6, or lq-CMA-ES's choice), every state through JSON. */
function run(method: MethodName, task: MixedTask, seed: number, evaluations: number): { state: BaseState; history: Observation[] } {
  const s = getStrategy(method);
  const { dim } = task;
  let state: BaseState = s.init(mixedInitSpec(task, 6, resolveOptions(method, dim)), Rng.fromSeed(seed));
  const history: Observation[] = [];
  while (history.length < evaluations) {
    const a = s.ask(state, { history: [...history], pending: [] }, state.generationSize ?? state.batchSize);
    const batch = a.points.map((x) => {
      expect(Number.isInteger(x[dim - 1]) && x[dim - 1]! >= 0 && x[dim - 1]! <= 2).toBe(true);
      return { x, y: task.f(x) };
    });
    history.push(...batch);
    state = JSON.parse(JSON.stringify(s.tell(a.state, { batch, history: [...history] }))) as BaseState;
  }
  return { state, history };
}

const SEEDS = [1, 2, 3, 4, 5, 6];
/** The most a choice can hold under CatCMA's margin with one parameter of three choices: 1 − 2 q_min. */
const CAP = 1 - 2 * marginFloor(3, 1);

describe('lq-cmaes with a categorical parameter', () => {
  it('plain task: after 120 evaluations q holds the most it can on the best choice (c = 2), which the prior made the least likely, in seeds 1–6', () => {
    for (const seed of SEEDS) {
      const { state, history } = run('lq-cmaes', PLAIN, seed, 120);
      expect(state.categorical![0]![2], `seed ${seed}`).toBeCloseTo(CAP, 9);
      expect(state.mean).toHaveLength(2);
      expect(Math.min(...history.map((o) => o.y))).toBeLessThan(1e-4);
    }
  });

  it('conditional SVC-like task: rbf is q\'s most probable choice after 120 evaluations in 4 of seeds 1–6 (the others stay on linear or poly: ALGORITHM.md §30)', () => {
    const modes = SEEDS.map((seed) => modeOf(run('lq-cmaes', SVC, seed, 120).state.categorical![0]!));
    expect(modes).toEqual([0, 2, 1, 2, 2, 2]);
  });

  it('starts with q at the prior with the margin, keeps the conditions, and injects the model optimum with choices drawn from q', () => {
    const s = getStrategy('lq-cmaes');
    const spec = { dim: 4, batchSize: 6, options: resolveOptions('lq-cmaes', 4), categories: [[0.96, 0.02, 0.02]], conditions: SVC.conditions! };
    let st = s.init(spec, Rng.fromSeed(2)) as BaseState & { asng: unknown; population: { x: number[]; injected: boolean }[] };
    expect(st.mean).toEqual([0, 0, 0]);
    expect(st.categorical![0]![1]).toBeCloseTo(marginFloor(3, 1), 15);
    expect(st.asng).toEqual({ Delta: 1, gamma: 0, s: [0, 0] });
    expect(st.conditions).toEqual(SVC.conditions);
    const history: Observation[] = [];
    for (let g = 0; g < 6; g++) {
      const a = s.ask(st, { history: [...history], pending: [] }, st.generationSize ?? 6);
      const batch = a.points.map((x) => ({ x, y: SVC.f(x) }));
      history.push(...batch);
      st = s.tell(a.state, { batch, history: [...history] }) as typeof st;
      for (const c of st.population) expect([0, 1, 2]).toContain(c.x[3]);
    }
    expect(st.population.filter((c) => c.injected)).toHaveLength(1);
  });

  it('a space of categorical parameters only: no Gaussian, nothing injected, q finds the best choices', () => {
    const s = getStrategy('lq-cmaes');
    let state = s.init({ dim: 2, batchSize: 6, options: resolveOptions('lq-cmaes', 2), categories: [[0.6, 0.3, 0.1], [0.8, 0.2]] }, Rng.fromSeed(5)) as BaseState & { population: { injected: boolean }[] };
    const g = (x: number[]) => (x[0] === 2 ? 0 : 1) + (x[1] === 1 ? 0 : 0.5);
    const history: Observation[] = [];
    while (history.length < 60) {
      const a = s.ask(state, { history: [...history], pending: [] }, state.generationSize ?? 6);
      const batch = a.points.map((x) => ({ x, y: g(x) }));
      history.push(...batch);
      state = s.tell(a.state, { batch, history: [...history] }) as typeof state;
      expect(state.population.some((c) => c.injected)).toBe(false);
    }
    expect(state.mean).toEqual([]);
    expect(modeOf(state.categorical![0]!)).toBe(2);
    expect(modeOf(state.categorical![1]!)).toBe(1);
  });
});

describe.each(['xnes', 'snes'] as MethodName[])('%s with a categorical parameter', (method) => {
  it('plain task: after 120 evaluations q holds the most it can on the best choice (c = 2), which the prior made the least likely, in seeds 1–6', () => {
    for (const seed of SEEDS) {
      const { state, history } = run(method, PLAIN, seed, 120);
      expect(state.categorical![0]![2], `seed ${seed}`).toBeCloseTo(CAP, 9);
      expect(state.mean).toHaveLength(2);
      expect(Math.min(...history.map((o) => o.y))).toBeLessThan(0.01);
    }
  });

  it('conditional SVC-like task: after 120 evaluations rbf is q\'s most probable choice (≥ 0.6) in seeds 1–6, though the prior favours linear', () => {
    for (const seed of SEEDS) {
      const { state } = run(method, SVC, seed, 120);
      expect(modeOf(state.categorical![0]!), `seed ${seed}`).toBe(2);
      expect(state.categorical![0]![2]).toBeGreaterThanOrEqual(0.6);
    }
  });

  it('the Gaussian covers the continuous coordinates; q starts at the prior with the margin and is CatCMA\'s update of the ranked choices', () => {
    const s = getStrategy(method);
    const spec = { dim: 4, batchSize: 5, options: resolveOptions(method, 4), box: { lower: [-1, -1, 0, 0], upper: [1, 1, 2, 1] }, categories: [[0.96, 0.02, 0.02], [0.5, 0.5]] };
    const st = s.init(spec, Rng.fromSeed(3)) as BaseState & { asng: { Delta: number; gamma: number; s: number[] }; bounds: unknown };
    expect(st.mean).toEqual([0, 0]);
    expect(st.cov).toEqual([[1, 0], [0, 1]]);
    expect(st.bounds).toEqual({ lower: [-1, -1], upper: [1, 1] });
    const floor = marginFloor(3, 2);
    expect(st.categorical![0]![1]).toBeCloseTo(floor, 15);
    expect(st.asng).toEqual({ Delta: 1, gamma: 0, s: [0, 0, 0] });
    const a = s.ask(st, { history: [], pending: [] }, 5);
    const batch = a.points.map((x, k) => ({ x, y: [3, 1, 4, 1.5, 9][k]! }));
    const next = s.tell(a.state, { batch, history: batch }) as typeof st;
    const ranked = orderBestFirst(batch).map((i) => batch[i]!.x.slice(2));
    const expected = catUpdate(st.categorical!, st.asng, ranked);
    expect(next.categorical).toEqual(expected.q);
    expect(next.asng).toEqual(expected.asng);
    expect(next.mean).toHaveLength(2);
    // One point carries no ranking: q and ASNG are kept.
    const one = s.tell(a.state, { batch: batch.slice(0, 1), history: batch.slice(0, 1) }) as typeof st;
    expect(one.categorical).toEqual(st.categorical);
    expect(one.asng).toEqual(st.asng);
  });

  it('a space of categorical parameters only: no Gaussian, q finds the best choices', () => {
    const s = getStrategy(method);
    let state: BaseState = s.init({ dim: 2, batchSize: 6, options: resolveOptions(method, 2), categories: [[0.6, 0.3, 0.1], [0.8, 0.2]] }, Rng.fromSeed(5));
    const g = (x: number[]) => (x[0] === 2 ? 0 : 1) + (x[1] === 1 ? 0 : 0.5);
    for (let k = 0; k < 20; k++) {
      const a = s.ask(state, { history: [], pending: [] }, 6);
      const batch = a.points.map((x) => ({ x, y: g(x) }));
      state = s.tell(a.state, { batch, history: batch });
    }
    expect(state.mean).toEqual([]);
    expect(modeOf(state.categorical![0]!)).toBe(2);
    expect(modeOf(state.categorical![1]!)).toBe(1);
  });
});
