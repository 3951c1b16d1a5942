/**
 * The strategy wrapper for several objectives, constraints and infeasible points
 * (src/engine/strategies/outcomes.ts, ALGORITHM.md §32): what the wrapped method is handed, that a
 * single-objective study is untouched, determinism, the method facts, and that prob-cmaes finds a
 * better front than random search on ZDT1.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/engine/errors.js';
import { getMultiBenchmark } from '../../../src/engine/benchmarks/multi.js';
import { scalarTargets } from '../../../src/engine/multi/targets.js';
import { Rng } from '../../../src/engine/random/index.js';
import { anchorsFor, DEFAULT_RESTART_AFTER, generationWeights, onFront, withOutcomes } from '../../../src/engine/strategies/outcomes.js';
import { probCmaes } from '../../../src/engine/strategies/prob-cmaes.js';
import { bo } from '../../../src/engine/strategies/bo.js';
import { METHOD_NAMES, getStrategy, methodFacts, resolveOptions, type MethodName } from '../../../src/engine/strategies/registry.js';
import type { AskContext, BaseState, Observation, StrategyDescriptor, TellContext } from '../../../src/engine/strategies/types.js';
import { runMulti } from '../../../bench/multi-engine.js';
import { feasibilityModel, PF_MIN } from '../../../src/engine/strategies/feasibility.js';
import { buildModel, toMat } from '../../../src/engine/gp/index.js';
import { selectBatch } from '../../../src/engine/strategies/probnes-bq.js';

/** A method that records what it is handed and changes nothing but the generation (init: `base`'s). */
function recorder(base: StrategyDescriptor<BaseState> = getStrategy('random')): { inner: StrategyDescriptor<BaseState>; seen: { op: string; ctx: AskContext | TellContext | Observation[] }[] } {
  const seen: { op: string; ctx: AskContext | TellContext | Observation[] }[] = [];
  const inner: StrategyDescriptor<BaseState> = {
    ...base,
    ask: (state, ctx, count) => {
      seen.push({ op: 'ask', ctx });
      return { points: Array.from({ length: count }, () => [0, 0]), state };
    },
    tell: (state, ctx) => {
      seen.push({ op: 'tell', ctx });
      return { ...state, generation: state.generation + 1 };
    },
    estimate: (_state, history) => {
      seen.push({ op: 'estimate', ctx: history });
      return { predicted: 1, predicted_std: 0.5 };
    },
  };
  return { inner, seen };
}

const spec = (outcomes?: { objectives: number; constraints: number }) => ({ dim: 2, batchSize: 3, options: {}, ...(outcomes ? { outcomes } : {}) });
const ys = (obs: readonly Observation[]) => obs.map((o) => o.y);

/** Three generations of `method` on a quadratic from seed 5: every asked point and the final state, as JSON. */
function trace(strategy: StrategyDescriptor<BaseState>, method: MethodName, outcomes?: { objectives: number; constraints: number }): string {
  const q = Math.max(strategy.minBatch, 3);
  const options = { ...resolveOptions(method, 2), ...(method === 'bo' ? { candidates: 100, mc_samples: 32 } : {}) };
  let state = strategy.init({ dim: 2, batchSize: q, options, ...(outcomes ? { outcomes } : {}) }, Rng.fromSeed(5));
  const history: Observation[] = [];
  const asked: number[][][] = [];
  for (let g = 0; g < 3; g++) {
    const a = strategy.ask(state, { history: [...history], pending: [] }, q);
    asked.push(a.points);
    const batch = a.points.map((x) => ({ x, y: (x[0] - 0.3) ** 2 + 2 * (x[1] + 0.1) ** 2 }));
    history.push(...batch);
    state = strategy.tell(a.state, { batch, history: [...history] });
  }
  return JSON.stringify({ asked, state });
}

describe('a single-objective study passes through untouched', () => {
  it.each([
    ['prob-cmaes', probCmaes],
    ['bo', bo],
  ] as const)('%s: the registry\'s wrapped method draws exactly what the method itself draws', (method, raw) => {
    const own = trace(raw as unknown as StrategyDescriptor<BaseState>, method);
    expect(trace(getStrategy(method), method)).toBe(own);
    // M = 1, K = 0 declared: nothing recorded either.
    expect(trace(getStrategy(method), method, { objectives: 1, constraints: 0 })).toBe(own);
  });

  it('hands the method the very contexts it was given (packed included)', () => {
    const { inner, seen } = recorder();
    const s = withOutcomes(inner);
    const state = s.init(spec(), Rng.fromSeed(1));
    expect(state.outcomes).toBeUndefined();
    const history = [{ x: [0, 0], y: 1 }];
    const ask = { history, pending: [] };
    s.ask(state, ask, 1);
    const tell = { batch: history, history, packed: { x: new Float64Array(2), y: new Float64Array([1]) } };
    s.tell(state, tell);
    expect(seen[0].ctx).toBe(ask);
    expect(seen[1].ctx).toBe(tell);
  });
});

describe('scalarised calls', () => {
  const history: Observation[] = [
    { x: [0, 0], y: 0, f: [0, 1] },
    { x: [1, 0], y: 1, f: [1, 0] },
    { x: [0, 1], y: 0.5, f: [0.5, 0.25] },
    { x: [1, 1], y: 0, infeasible: true },
  ];

  it('records M, K and a seed at init without disturbing the method\'s own generator', () => {
    const s = getStrategy('prob-cmaes');
    const init = (options: Record<string, string | number>, outcomes?: { objectives: number; constraints: number }) =>
      s.init({ dim: 2, batchSize: 3, options: { ...resolveOptions('prob-cmaes', 2), ...options }, ...(outcomes ? { outcomes } : {}) }, Rng.fromSeed(9));
    // One distribution: the method's own state, outcomes added.
    const { outcomes, ...rest } = init({ mo_members: 1 }, { objectives: 2, constraints: 1 });
    expect(rest).toEqual(init({}));
    expect(outcomes).toMatchObject({ objectives: 2, constraints: 1 });
    expect(Number.isInteger(outcomes!.seed)).toBe(true);
    // The default decomposition: member 0 is the method's state without its start phase (§32.5).
    const { outcomes: o8, ...first } = init({}, { objectives: 2, constraints: 0 });
    expect(first).toEqual(init({ start_phase: 'off' }));
    expect(o8!.members).toHaveLength(7);
    expect(o8!.norm).toBe('front');
  });

  it('ask and tell of one generation score the history alike, with that generation\'s weights', () => {
    const { inner, seen } = recorder();
    const s = withOutcomes(inner);
    const state = s.init(spec({ objectives: 2, constraints: 0 }), Rng.fromSeed(1));
    s.ask(state, { history, pending: [] }, 1);
    s.ask(state, { history, pending: [] }, 1);
    s.tell(state, { batch: history.slice(2), history, packed: { x: new Float64Array(8), y: new Float64Array(4) } });
    const expected = scalarTargets(history, { objectives: 2, weights: generationWeights(state.outcomes!, 0) });
    const [a1, a2, t] = seen.map((e) => e.ctx as TellContext);
    expect(ys(a1.history)).toEqual(expected);
    expect(ys(a2.history)).toEqual(expected);
    expect(ys(t.history)).toEqual(expected);
    expect(ys(t.batch)).toEqual(expected.slice(2));
    // The method reads the rescored history, not a packed copy of the placeholders, and no outcome fields.
    expect(t.packed).toBeUndefined();
    expect(t.history.every((o) => o.f === undefined && o.infeasible === undefined)).toBe(true);
    // The infeasible point is the worst.
    expect(expected[3]).toBeGreaterThan(Math.max(...expected.slice(0, 3)));
  });

  it('draws new weights each generation from (seed, t) alone', () => {
    const o = { objectives: 3, constraints: 0, seed: 42 };
    const w0 = generationWeights(o, 0);
    expect(generationWeights(o, 0)).toEqual(w0);
    expect(generationWeights(o, 1)).not.toEqual(w0);
    expect(generationWeights({ ...o, seed: 43 }, 0)).not.toEqual(w0);
    expect(w0.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
  });

  it('rescores an infeasible point of a single-objective study, which declares nothing', () => {
    const { inner, seen } = recorder();
    const s = withOutcomes(inner);
    const state = s.init(spec(), Rng.fromSeed(1));
    s.ask(state, { history: [{ x: [0, 0], y: 2 }, { x: [1, 1], y: 0, infeasible: true }, { x: [0, 1], y: 4 }], pending: [] }, 1);
    // 4 + 0.1·(4 − 2)
    expect(ys((seen[0].ctx as AskContext).history)).toEqual([2, 4.2, 4]);
  });

  it('estimates nothing for several objectives; the method\'s own estimate on rescored values for one', () => {
    const { inner, seen } = recorder();
    const s = withOutcomes(inner);
    const multi = s.init(spec({ objectives: 2, constraints: 0 }), Rng.fromSeed(1));
    expect(s.estimate!(multi, history)).toEqual({ predicted: null, predicted_std: null });
    const single = s.init(spec({ objectives: 1, constraints: 1 }), Rng.fromSeed(1));
    expect(single.outcomes).toMatchObject({ objectives: 1, constraints: 1 });
    expect(s.estimate!(single, [{ x: [0, 0], y: 3, f: [3], c: [-1] }, { x: [0, 1], y: 1, f: [1], c: [1] }])).toEqual({ predicted: 1, predicted_std: 0.5 });
    // ŷ = 3, range 0 → scale 1: max(1, 3) + 1/1 = 4.
    expect(ys(seen[0].ctx as Observation[])).toEqual([3, 4]);
  });

  it('migrate keeps the outcomes of a stored state and refuses malformed ones', () => {
    const s = getStrategy('prob-cmaes');
    const state = s.init({ dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2), outcomes: { objectives: 2, constraints: 0 } }, Rng.fromSeed(2));
    const stored = JSON.parse(JSON.stringify(state));
    expect(s.migrate(stored).outcomes).toEqual(state.outcomes);
    expect(() => s.migrate({ ...stored, outcomes: { objectives: 0, constraints: 0, seed: 1 } })).toThrow(InvalidInputError);
    expect(() => s.init({ dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2), outcomes: { objectives: 2, constraints: -1 } }, Rng.fromSeed(2))).toThrow(InvalidInputError);
  });
});

describe('methods on a study of several objectives', () => {
  const zdt = getMultiBenchmark('zdt1', 3);
  const evaluate = (u: number[]): Observation => {
    const x = u.map((v) => Math.min(1, Math.max(0, 0.5 + v / 4)));
    const { f } = zdt.evaluate(x);
    return { x: u, y: f[0], f };
  };

  function generations(method: MethodName, n: number, categories?: number[][]): { state: BaseState; history: Observation[] } {
    const s = getStrategy(method);
    const dim = 3 + (categories?.length ?? 0);
    const options = { ...resolveOptions(method, dim), ...(method === 'bo' ? { candidates: 100, mc_samples: 32 } : {}) };
    let state = s.init({ dim, batchSize: Math.max(3, s.minBatch), options, box: { lower: Array(dim).fill(-2), upper: Array(dim).fill(2) }, outcomes: { objectives: 2, constraints: 0 }, ...(categories ? { categories } : {}) }, Rng.fromSeed(4));
    const history: Observation[] = [];
    for (let g = 0; g < n; g++) {
      const a = s.ask(state, { history: [...history], pending: [] }, generationSizeOf(state));
      const batch = a.points.map((u) => {
        const o = evaluate(u.slice(0, 3));
        return { ...o, x: u, f: categories ? [o.f![0], o.f![1] + u[3]] : o.f };
      });
      history.push(...batch);
      state = s.tell(a.state, { batch, history: [...history] });
    }
    return { state, history };
  }
  const generationSizeOf = (state: BaseState) => state.generationSize ?? state.batchSize;

  it.each(['prob-cmaes', 'bo'] as const)('%s: asking twice from the same state gives the same points', (method) => {
    const { state, history } = generations(method, 4);
    const s = getStrategy(method);
    const a = s.ask(state, { history, pending: [] }, 3);
    const b = s.ask(JSON.parse(JSON.stringify(state)), { history: structuredClone(history), pending: [] }, 3);
    expect(a.points).toEqual(b.points);
    expect(a.points.every((p) => p.every(Number.isFinite))).toBe(true);
  });

  it('the ProbNES methods, BO and random are able; a method that is not still runs at engine level', () => {
    for (const m of ['prob-cmaes', 'prob-xnes', 'prob-snes', 'bo', 'random'] as const) {
      expect(methodFacts(m)).toMatchObject({ multiObjective: true, constraints: true });
    }
    expect(METHOD_NAMES.filter((m) => !methodFacts(m).multiObjective)).toEqual(['cmaes', 'lq-cmaes', 'xnes', 'snes']);
    const { state, history } = generations('cmaes', 3);
    expect(state.generation).toBe(3);
    expect(history.length).toBe(3 * state.batchSize);
  });

  it('prob-cmaes with a categorical parameter searches the mixed space', () => {
    const { state, history } = generations('prob-cmaes', 4, [[0.5, 0.5]]);
    expect(state.generation).toBe(4);
    expect(history.every((o) => o.x[3] === 0 || o.x[3] === 1)).toBe(true);
  });
});

describe('the front prob-cmaes finds', () => {
  // ZDT1 at d = 4, 50·d = 200 evaluations, batch 3, reference point (11, 11) (bench/multi-engine.ts, as
  // the service runs it). Measured with that lab over seeds 0–9 (ALGORITHM.md §32.5): prob-cmaes
  // 120.61–120.64, random 102.6–112.2 (the true front's 120.67); one distribution (mo_members 1, §32.2)
  // 111.2–116.1 over seeds 0–7. Three seeds here: each must beat random and pass 118, which one
  // distribution never reached.
  it('beats random search on ZDT1 at 50·d evaluations on every one of three seeds', () => {
    for (let seed = 0; seed < 3; seed++) {
      const run = (method: MethodName) => runMulti({ method, problem: 'zdt1', dim: 4, seed, batch: 3, checkpoints: [200], options: {} }).hv[0];
      const ours = run('prob-cmaes');
      expect(ours).toBeGreaterThan(run('random'));
      expect(ours).toBeGreaterThan(118);
    }
  }, 120_000);
});

describe('decomposition: several search distributions (ALGORITHM.md §32.2)', () => {
  it('spreads the anchors over the simplex, the vertices first', () => {
    expect(anchorsFor(2, 5)).toEqual([[1, 0], [0.75, 0.25], [0.5, 0.5], [0.25, 0.75], [0, 1]]);
    const a = anchorsFor(3, 5);
    expect(a.slice(0, 4)).toEqual([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]]);
    for (const w of a) expect(w.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 14);
    // The default P = 8 at M = 3: eight different anchors.
    expect(new Set(anchorsFor(3, 8).map((w) => w.join())).size).toBe(8);
  });

  it('draws each member\'s weights from Dirichlet(1 + α·a_p): the mean (1 + α a_p)/(M + α) within 4 standard errors', () => {
    // Dirichlet(β): E w_i = β_i/Σβ, Var w_i = β_i(Σβ − β_i)/((Σβ)²(Σβ + 1)). Anchor (0.75, 0.25), α = 20: β = (16, 6).
    const o = { objectives: 2, constraints: 0, seed: 7, anchors: anchorsFor(2, 5), alpha: 20 };
    const n = 2000;
    let sum = 0;
    for (let t = 0; t < n; t++) sum += generationWeights(o, t, 1)[0];
    const mean = 16 / 22;
    const sd = Math.sqrt((16 * 6) / (22 * 22 * 23));
    expect(Math.abs(sum / n - mean)).toBeLessThan((4 * sd) / Math.sqrt(n));
    expect(generationWeights(o, 3, 1)).toEqual(generationWeights(o, 3, 1));
    expect(generationWeights(o, 3, 1)).not.toEqual(generationWeights(o, 3, 2));
  });

  it('hands out generation t from member t mod P and tells every member', () => {
    const s = getStrategy('prob-cmaes');
    const options = { ...resolveOptions('prob-cmaes', 2), mo_members: 3 };
    let state = s.init({ dim: 2, batchSize: 3, options, outcomes: { objectives: 2, constraints: 0 } }, Rng.fromSeed(3));
    expect(state.outcomes!.members).toHaveLength(2);
    const history: Observation[] = [];
    for (let t = 0; t < 3; t++) {
      const before = JSON.stringify(state.outcomes!.members);
      const a = s.ask(state, { history: [...history], pending: [] }, 3);
      // Member 0 is the state itself: its generator moves only in its own generations.
      if (t === 0) {
        expect(a.state.rng).not.toEqual(state.rng);
        expect(JSON.stringify(a.state.outcomes!.members)).toBe(before);
      } else {
        expect(a.state.rng).toEqual(state.rng);
        expect(a.state.outcomes!.members![t - 1].rng).not.toEqual(state.outcomes!.members![t - 1].rng);
      }
      const batch = a.points.map((x) => ({ x, y: 0, f: [x[0] ** 2 + x[1] ** 2, (x[0] - 1) ** 2 + x[1] ** 2] }));
      history.push(...batch);
      state = s.tell(a.state, { batch, history: [...history] });
      expect(state.outcomes!.members!.map((m) => m.generation)).toEqual([t + 1, t + 1]);
      expect(state.diagnostics.integral_mean).toBeNull();
    }
  });
});

describe('the declared reference point (ALGORITHM.md §32.5)', () => {
  const s = getStrategy('prob-cmaes');
  const init = (reference: number[] | undefined, options: Record<string, string> = {}) =>
    s.init({ dim: 2, batchSize: 3, options: { ...resolveOptions('prob-cmaes', 2), ...options }, outcomes: { objectives: 2, constraints: 0, ...(reference ? { reference } : {}) } }, Rng.fromSeed(3));

  it('is kept for the decomposition\'s normalisation and scores the history by it', () => {
    const state = init([4, 2]);
    expect(state.outcomes!.reference).toEqual([4, 2]);
    expect(init(undefined).outcomes!.reference).toBeUndefined();
    expect(init([4, 2], { mo_reference: 'off' }).outcomes!.reference).toBeUndefined();
    expect(init([4, 2], { mo_norm: 'feasible' }).outcomes!.reference).toBeUndefined();
    // Generation 0's targets: the front's normalisation up to r, as targets.ts computes with the same weights.
    const history: Observation[] = [{ x: [0, 0], y: 0, f: [0, 1] }, { x: [1, 0], y: 1, f: [1, 0] }, { x: [0, 1], y: 2, f: [2, 2] }];
    const weights = generationWeights(state.outcomes!, 0, 0);
    const expected = scalarTargets(history, { objectives: 2, weights, normalise: 'front', reference: [4, 2] });
    const withoutR = scalarTargets(history, { objectives: 2, weights, normalise: 'front' });
    expect(expected).not.toEqual(withoutR);
    const { inner, seen } = recorder();
    const wrapped = withOutcomes(inner, true);
    wrapped.ask({ ...state, method: 'random' } as BaseState, { history, pending: [] }, 1);
    expect(ys((seen[0].ctx as AskContext).history)).toEqual(expected);
  });

  it('refuses a malformed one at init and in a stored state', () => {
    expect(() => init([4])).toThrow(InvalidInputError);
    expect(() => init([4, Number.NaN])).toThrow(InvalidInputError);
    const state = init([4, 2]);
    expect(() => s.migrate({ ...state, outcomes: { ...state.outcomes!, reference: [1, 'x'] } } as never)).toThrow(InvalidInputError);
    expect(s.migrate(JSON.parse(JSON.stringify(state))).outcomes!.reference).toEqual([4, 2]);
  });
});

describe('restarts of stalled members (ALGORITHM.md §32.5)', () => {
  const pt = (f: number[], extra: Partial<Observation> = {}): Observation => ({ x: [0, 0], y: 0, f, ...extra });

  it('counts a generation as contributing when one of its feasible results is dominated by no feasible evaluation', () => {
    const front = [pt([0, 2]), pt([2, 0])];
    expect(onFront([pt([1, 1])], [...front, pt([1, 1])])).toBe(true);
    expect(onFront([pt([1, 3])], [...front, pt([1, 3])])).toBe(false);
    // Equal to a front point: both stay on the front.
    expect(onFront([pt([0, 2])], [...front, pt([0, 2])])).toBe(true);
    // A violator or an infeasible point never contributes; a dominating violator does not push a feasible point off.
    expect(onFront([pt([1, 1], { c: [0.5] })], [...front, pt([1, 1], { c: [0.5] })])).toBe(false);
    expect(onFront([{ x: [0, 0], y: 0, infeasible: true }], front)).toBe(false);
    expect(onFront([pt([1, 1])], [pt([0, 0], { c: [1] }), pt([1, 1])])).toBe(true);
  });

  /** Generations of a 3-member prob-cmaes whose every result is dominated by one point evaluated first. */
  function stalled(generations: number, options: Record<string, number> = {}) {
    const s = getStrategy('prob-cmaes');
    let state = s.init({ dim: 2, batchSize: 3, options: { ...resolveOptions('prob-cmaes', 2), mo_members: 3, ...options }, outcomes: { objectives: 2, constraints: 0 } }, Rng.fromSeed(3));
    const template = JSON.parse(JSON.stringify(state.outcomes?.restart?.template ?? null));
    const history: Observation[] = [{ x: [0, 0], y: -1, f: [-1, -1] }];
    const states = [state];
    for (let t = 0; t < generations; t++) {
      const a = s.ask(state, { history: [...history], pending: [] }, 3);
      const batch = a.points.map((x) => ({ x, y: 0, f: [x[0] ** 2 + x[1] ** 2, (x[0] - 1) ** 2 + x[1] ** 2] }));
      history.push(...batch);
      state = s.tell(a.state, { batch, history: [...history] });
      states.push(state);
    }
    return { states, template };
  }

  it(`restarts a member from the prior after ${DEFAULT_RESTART_AFTER} of its generations without a point on the front`, () => {
    const P = 3;
    // Member 1 asks generations 1, 4, 7: its third stalled generation is 7, told into state 8.
    const { states, template } = stalled(P * (DEFAULT_RESTART_AFTER - 1) + 2);
    const before = states[P * (DEFAULT_RESTART_AFTER - 1) + 1].outcomes!;
    const after = states[P * (DEFAULT_RESTART_AFTER - 1) + 2].outcomes!;
    // Member 0 (generations 0, 3, 6) restarted at generation 6's tell; members 1 and 2 have stalled twice.
    expect(before.restart!.stalls).toEqual([0, DEFAULT_RESTART_AFTER - 1, DEFAULT_RESTART_AFTER - 1]);
    expect(before.restart!.count).toBe(1);
    expect(after.restart!.count).toBe(2);
    expect(after.restart!.stalls).toEqual([0, 0, DEFAULT_RESTART_AFTER - 1]);
    const member = after.members![0];
    // The prior again (the method's state at init), its generator new, in the study's generation.
    expect(member.mean).toEqual(template.mean);
    expect(member.cov).toEqual(template.cov);
    expect(before.members![0].mean).not.toEqual(template.mean);
    expect(member.rng).not.toEqual(template.rng);
    expect(member.generation).toBe(P * (DEFAULT_RESTART_AFTER - 1) + 2);
    // Member 0 (the state itself) restarted one generation earlier, keeping the outcomes.
    const zero = states[P * (DEFAULT_RESTART_AFTER - 1) + 1];
    expect(zero.mean).toEqual(template.mean);
    expect(zero.generation).toBe(P * (DEFAULT_RESTART_AFTER - 1) + 1);
  });

  it('a generation that puts a point on the front resets its member\'s count: no restart', () => {
    const s = getStrategy('prob-cmaes');
    let state = s.init({ dim: 2, batchSize: 3, options: { ...resolveOptions('prob-cmaes', 2), mo_members: 3 }, outcomes: { objectives: 2, constraints: 0 } }, Rng.fromSeed(3));
    const history: Observation[] = [{ x: [0, 0], y: -1, f: [-1, -1] }];
    for (let t = 0; t < 9; t++) {
      const a = s.ask(state, { history: [...history], pending: [] }, 3);
      // Member 1's generations (1, 4, 7) each bring a new best in the first objective: on the front every time.
      const batch = a.points.map((x, i) => ({ x, y: 0, f: t % 3 === 1 && i === 0 ? [-2 - t, 5] : [x[0] ** 2 + 1, x[1] ** 2 + 1] }));
      history.push(...batch);
      state = s.tell(a.state, { batch, history: [...history] });
    }
    expect(state.outcomes!.restart!.stalls[1]).toBe(0);
    // Members 0 and 2 restarted (generations 3 and 5), member 1 never.
    expect(state.outcomes!.restart!.count).toBe(2);
  });

  it('never restarts with mo_restart 0, nor a stored state without restarts', () => {
    const { states } = stalled(8, { mo_restart: 0 });
    expect(states[8].outcomes!.restart).toBeUndefined();
    const s = getStrategy('prob-cmaes');
    const init = s.init({ dim: 2, batchSize: 3, options: { ...resolveOptions('prob-cmaes', 2), mo_members: 3 }, outcomes: { objectives: 2, constraints: 0 } }, Rng.fromSeed(3));
    const { restart: _r, ...old } = init.outcomes!;
    const history: Observation[] = [{ x: [0, 0], y: -1, f: [-1, -1] }];
    let state: BaseState = { ...init, outcomes: old };
    for (let t = 0; t < 8; t++) {
      const a = s.ask(state, { history: [...history], pending: [] }, 3);
      const batch = a.points.map((x) => ({ x, y: 0, f: [x[0] ** 2 + x[1] ** 2, 1 + x[1] ** 2] }));
      history.push(...batch);
      state = s.tell(a.state, { batch, history: [...history] });
    }
    expect(state.outcomes!.restart).toBeUndefined();
    expect(state.outcomes!.members![0].mean).not.toEqual(init.outcomes!.members![0].mean);
  });
});

describe('the batch\'s feasibility filter (ALGORITHM.md §32.3–§32.4)', () => {
  /** A 7×7 grid over [−1.5, 1.5]² with `at` for each point. */
  const grid = (at: (x: number[]) => Observation): Observation[] =>
    Array.from({ length: 49 }, (_, k) => at([-1.5 + 0.5 * Math.floor(k / 7), -1.5 + 0.5 * (k % 7)]));

  it('is handed to the method only with mo_feasibility on, for declared constraints or infeasible points', () => {
    const ask = (outcomes: { objectives: number; constraints: number } | undefined, history: Observation[], options = {}) => {
      const { inner, seen } = recorder();
      const s = withOutcomes(inner, true);
      s.ask(s.init({ ...spec(outcomes), options }, Rng.fromSeed(1)), { history, pending: [] }, 1);
      return (seen[0].ctx as AskContext).admissible;
    };
    const plain = grid((x) => ({ x, y: x[0], f: [x[0]], c: [x[0] - 0.5] }));
    expect(ask(undefined, plain.map(({ x, y }) => ({ x, y })))).toBeUndefined();
    expect(ask(undefined, plain.map(({ x, y }) => ({ x, y })), { mo_feasibility: 'on' })).toBeUndefined();
    expect(ask({ objectives: 2, constraints: 0 }, plain.map(({ c: _c, ...o }) => ({ ...o, f: [o.x[0], o.x[1]] })), { mo_members: 1, mo_feasibility: 'on' })).toBeUndefined();
    // Off by default (§32.5), and when said so.
    expect(ask({ objectives: 1, constraints: 1 }, plain)).toBeUndefined();
    expect(ask({ objectives: 1, constraints: 1 }, plain, { mo_feasibility: 'off' })).toBeUndefined();
    // One constraint, c = u_1 − 0.5, under the method's ν = N(0, I): sure of it on either side.
    const admissible = ask({ objectives: 1, constraints: 1 }, plain, { mo_feasibility: 'on' })!;
    expect(admissible([-1, 0])).toBe(true);
    expect(admissible([1.5, 0])).toBe(false);
  });

  it('fits the model near the asking member\'s ν: the 200 evaluations nearest its mean', () => {
    // Member 1 asks generation 1 from ν centred at (5, 0). 200 feasible evaluations lie around the
    // origin, 50 violators around (5, 0): member 0's nearest 200 hold no violation, member 1's do.
    const { inner, seen } = recorder(probCmaes as unknown as StrategyDescriptor<BaseState>);
    const s = withOutcomes(inner, true);
    const init = s.init({ ...spec({ objectives: 2, constraints: 1 }), options: { ...resolveOptions('prob-cmaes', 2), mo_members: 2, mo_feasibility: 'on' } }, Rng.fromSeed(1));
    const o = init.outcomes!;
    const state = { ...init, generation: 1, outcomes: { ...o, members: [{ ...o.members![0], mean: [5, 0] }] } };
    const at = (x: number[], c: number): Observation => ({ x, y: 0, f: [x[0], x[1]], c: [c] });
    const history = [
      ...Array.from({ length: 200 }, (_, k) => at([0.1 * (k % 10) - 0.45, 0.1 * Math.floor(k / 10) - 1], -1)),
      ...Array.from({ length: 50 }, (_, k) => at([5 + 0.2 * (k % 5) - 0.4, 0.2 * Math.floor(k / 5) - 1], 1)),
    ];
    s.ask(state, { history, pending: [] }, 1);
    expect((seen[0].ctx as AskContext).admissible!([5, 0])).toBe(false);
  });

  it('makes a region of crashes inadmissible in a study that declares nothing (§32.4)', () => {
    const { inner, seen } = recorder();
    const s = withOutcomes(inner, true);
    const history = grid((x) => (x[0] > 0.5 ? { x, y: 0, infeasible: true } : { x, y: x[1] }));
    s.ask(s.init({ ...spec(), options: { mo_feasibility: 'on' } }, Rng.fromSeed(1)), { history, pending: [] }, 1);
    const admissible = (seen[0].ctx as AskContext).admissible!;
    for (const u2 of [-1, 0, 1]) {
      expect(admissible([1.5, u2])).toBe(false);
      expect(admissible([-1, u2])).toBe(true);
    }
  });

  describe('the pool of batch BQ (probnes-bq.ts selectBatch)', () => {
    // A GP on a few points of a quadratic, ν = N(0, I), a pool of 200 draws, batches of 5.
    const X = [[0, 0], [1, 0], [0, 1], [-1, 0.5], [0.5, -1]];
    const model = buildModel(toMat(X), X.map((x) => -(x[0] ** 2 + x[1] ** 2)), { lengthscales: [1, 1], outputscale: 1, noise: 1e-4, constant: 0 });
    const select = (selection: 'greedy' | 'random-batches', admissible?: (u: number[]) => boolean) => {
      const rng = Rng.fromSeed(11);
      const points = selectBatch(model, [0, 0], [[1, 0], [0, 1]], [], 5, 50, rng, { size: 200, selection }, admissible);
      return { points, rng: rng.state() };
    };

    it.each(['greedy', 'random-batches'] as const)('%s: keeps only admissible candidates; all of them when fewer than the batch remain', (selection) => {
      const free = select(selection);
      // Unfiltered, the batch has points with u_1 ≥ 0 (half of ν): the filter has something to drop.
      expect(free.points.some((u) => u[0] >= 0)).toBe(true);
      const left = select(selection, (u) => u[0] < 0);
      expect(left.points).toHaveLength(5);
      expect(left.points.every((u) => u[0] < 0)).toBe(true);
      // None admissible, or fewer than 5 of 200 (P(u_1 > 2.6) ≈ 0.5 %): the pool is kept whole.
      expect(select(selection, () => false)).toEqual(free);
      let few = 0;
      const rare = select(selection, (u) => (u[0] > 2.6 ? (few++, true) : false));
      expect(few).toBeLessThan(5);
      expect(rare).toEqual(free);
    });

    it('draws nothing more from the method\'s generator (greedy: the generator ends where it ends without)', () => {
      expect(select('greedy', (u) => u[0] < 0).rng).toEqual(select('greedy').rng);
    });
  });

  describe('prob-cmaes on a constrained study', () => {
    // Two objectives whose optima lie at u_1 = 2, beyond the constraint c = u_1 − 0.5 ≤ 0; batches of 12.
    const evaluate = (u: number[]): Observation => ({ x: u, y: 0, f: [(u[0] - 2) ** 2 + u[1] ** 2, (u[0] - 2) ** 2 + (u[1] - 1) ** 2], c: [u[0] - 0.5] });
    const q = 12;

    /** Two generations without the filter, then the asking member (generation 2: member 2) centred on the boundary with Σ = I. */
    function straddling(): { state: BaseState; history: Observation[]; asker: BaseState } {
      const s = getStrategy('prob-cmaes');
      let state = s.init({ dim: 2, batchSize: q, options: resolveOptions('prob-cmaes', 2), outcomes: { objectives: 2, constraints: 1 } }, Rng.fromSeed(7));
      const history: Observation[] = [];
      for (let g = 0; g < 2; g++) {
        const a = s.ask(state, { history: [...history], pending: [] }, q);
        const batch = a.points.map(evaluate);
        history.push(...batch);
        state = s.tell(a.state, { batch, history: [...history] });
      }
      const asker = { ...state.outcomes!.members![1], mean: [0.5, 0], cov: [[1, 0], [0, 1]] };
      const members = state.outcomes!.members!.map((m, k) => (k === 1 ? asker : m));
      return { state: { ...state, outcomes: { ...state.outcomes!, members } }, history, asker };
    }

    it('asks only points the model does not rule out, where without the filter it asks violators', () => {
      const { state, history, asker } = straddling();
      const s = getStrategy('prob-cmaes');
      expect(state.generation % 8).toBe(2);
      const pf = feasibilityModel(history, 1, asker.mean, asker.cov);
      // The batch: μ, the model's optimum (neither from the pool), then 10 points of the pool.
      const pool = (points: number[][]) => points.slice(2).map((u) => pf.pf(u));
      const on = { ...state.outcomes!, feasibility: 'on' as const };
      const off = s.ask(state, { history, pending: [] }, q).points;
      const filtered = s.ask({ ...state, outcomes: on }, { history, pending: [] }, q).points;
      expect(off[0]).toEqual(asker.mean);
      expect(filtered[0]).toEqual(asker.mean);
      expect(pool(off).filter((p) => p < PF_MIN).length).toBeGreaterThanOrEqual(3);
      expect(pool(filtered).every((p) => p >= PF_MIN)).toBe(true);
      // The same state asked again, or its JSON copy: the same points.
      const again = s.ask(JSON.parse(JSON.stringify({ ...state, outcomes: on })), { history: structuredClone(history), pending: [] }, q).points;
      expect(again).toEqual(filtered);
    });
  });
});
