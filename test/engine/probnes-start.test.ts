/**
 * The ProbNES start phase (src/engine/strategies/probnes-start.ts; docs/ALGORITHM.md §29): Powell's
 * stencil and model points through the strategy contract, the hand-over to the natural-gradient search,
 * the budget rule, several workers, and the stored state's checks.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { resolveOptions } from '../../src/engine/strategies/registry.js';
import { STRATEGIES } from '../../src/engine/index.js';
import { initPowell, powellNext, powellObserve, powellStencil } from '../../src/engine/strategies/powell-iteration.js';
import { quadValue } from '../../src/engine/strategies/powell-model.js';
import { startPhaseExtras, startPhaseLength } from '../../src/engine/strategies/probnes-params.js';
import type { ProbnesState } from '../../src/engine/strategies/probnes-core.js';
import { generationSize, type Observation, type StoredState } from '../../src/engine/strategies/types.js';

const probCmaes = STRATEGIES['prob-cmaes'];

function init(d: number, opts: { budget?: number | null; q?: number; options?: Record<string, string | number | boolean>; box?: { lower: number[]; upper: number[] } | null; method?: 'prob-cmaes' | 'prob-xnes' | 'prob-snes' } = {}): ProbnesState {
  const method = opts.method ?? 'prob-cmaes';
  return STRATEGIES[method].init({ dim: d, batchSize: opts.q ?? 3, options: resolveOptions(method, d, { candidates: 50, ...opts.options }), box: opts.box ?? null, budget: opts.budget ?? null }, Rng.fromSeed(5)) as ProbnesState;
}

/** A sequential worker: asks one point at a time (the generation's size when that is more), reports each. */
function sequential(state: ProbnesState, f: (x: number[]) => number, evals: number, method: 'prob-cmaes' | 'prob-xnes' | 'prob-snes' = 'prob-cmaes') {
  const strat = STRATEGIES[method];
  const history: Observation[] = [];
  const states: ProbnesState[] = [state];
  /** Per evaluation: a point of Powell's iteration (the stencil, or the model's trust-region or geometry step). */
  const fromPhase: boolean[] = [];
  let s = state;
  while (history.length < evals) {
    const a = strat.ask(s, { history, pending: [] }, Math.min(generationSize(s), evals - history.length));
    const batch = a.points.map((x) => ({ x, y: f(x) }));
    history.push(...batch);
    fromPhase.push(...a.points.map((x) => s.start !== null && (s.generation === 0 || x === a.state.start?.powell.pending?.x)));
    s = strat.tell(a.state, { batch, history: history.slice() }) as ProbnesState;
    states.push(s);
  }
  return { state: s, history, states, fromPhase };
}

const rosen = (x: number[]) => x.slice(1).reduce((t, v, i) => t + 100 * (v - x[i] ** 2) ** 2 + (1 - x[i]) ** 2, 0);

describe('the start phase (ALGORITHM.md §29)', () => {
  it('generation 0 is the 2d + 1 stencil μ₀, μ₀ ± e_i, handed out as one batch', () => {
    const s = init(3, { budget: 100 });
    expect(s.start).not.toBeNull();
    expect(generationSize(s)).toBe(7);
    const a = probCmaes.ask(s, { history: [], pending: [] }, 7);
    expect(a.points).toEqual(powellStencil([0, 0, 0], 1));
    // Asked in parts (workers asking one at a time), the same 7 points in the same order.
    let t = s;
    const parts: number[][] = [];
    for (const n of [2, 4, 1]) {
      const b = probCmaes.ask(t, { history: [], pending: parts.map((x) => x.slice()) }, n);
      parts.push(...b.points);
      t = b.state as ProbnesState;
    }
    expect(parts).toEqual(a.points);
  });

  it('a sequential worker gets exactly Powell\'s sequence: each point from every result so far', () => {
    // The reference: powell-iteration.ts driven alone on the same function (Rosenbrock in 3-D, no box).
    const d = 3, L = 60;
    const { history, states } = sequential(init(d, { options: { start_phase_length: L } }), rosen, L);
    const ref = initPowell(d);
    const seq: number[][] = [];
    for (const x of powellStencil([0, 0, 0], 1)) {
      seq.push(x);
      powellObserve(ref, x, rosen(x));
    }
    while (seq.length < L) {
      const x = powellNext(ref, null);
      if (!x) break;
      seq.push(x);
      powellObserve(ref, x, rosen(x));
    }
    expect(seq.length).toBe(L);
    history.forEach((o, i) => o.x.forEach((v, k) => expect(v).toBeCloseTo(seq[i][k], 12)));
    // One result per generation after the stencil, until the phase hands over after L evaluations.
    expect(states.slice(1, -1).every((s) => generationSize(s) === 1)).toBe(true);
    const last = states[states.length - 1];
    expect(last.start).toBeNull();
    expect(last.generationSize).toBeUndefined();
    // Hand-over: μ at the best point evaluated.
    const best = history.reduce((b, o) => (o.y < b.y ? o : b));
    expect(last.mean).toEqual(best.x);
  });

  it('solves a sphere at evaluation 2d + 2: the stencil\'s model is exact and its trust step lands on the minimiser', () => {
    const d = 4, c = [0.3, -0.6, 0.2, 0.5];
    const f = (x: number[]) => x.reduce((t, v, i) => t + (v - c[i]) ** 2, 0);
    const { history } = sequential(init(d, { budget: 50 }), f, 2 * d + 2);
    expect(Math.min(...history.slice(0, 2 * d + 1).map((o) => o.y))).toBeGreaterThan(0.1);
    expect(history[2 * d + 1].y).toBeLessThan(1e-20);
  });

  it('tells the natural-gradient update q results at a time during the phase, μ at the best point after each', () => {
    const d = 2, q = 3;
    const { states, history } = sequential(init(d, { q, options: { start_phase_length: 20 } }), rosen, 14);
    // Stencil (5) → one update; then an update every q = 3 results: after 8, 11, 14.
    const gpFits = states.filter((s, i) => i > 0 && s.gp !== states[i - 1].gp).length;
    expect(gpFits).toBe(4);
    for (const s of states.slice(1)) {
      const seen = history.slice(0, s.start!.seen);
      if (s.gp !== states[states.indexOf(s) - 1].gp) expect(s.mean).toEqual(seen.reduce((b, o) => (o.y < b.y ? o : b)).x);
    }
  });

  it('the phase length follows the declared budget (startPhaseLength), and the natural-gradient search follows it', () => {
    expect(startPhaseLength(5, 25)).toBe(25);
    expect(startPhaseLength(5, 50)).toBe(50);
    expect(startPhaseLength(5, 100)).toBe(100);
    expect(startPhaseLength(2, 40)).toBe(10);
    expect(startPhaseLength(2, 20)).toBe(20);
    expect(startPhaseLength(5, 250)).toBe(25);
    expect(startPhaseLength(5, null)).toBe(25);
    expect(startPhaseLength(2, null)).toBe(20);
    expect(init(5, { budget: 150 }).params.startPhaseLength).toBe(25);
    expect(init(5, { budget: 100 }).params.startPhaseLength).toBe(100);
    expect(init(5).params.startPhaseLength).toBe(25);
    const { states } = sequential(init(2, { budget: 40 }), rosen, 40);
    const ended = states.findIndex((s) => s.start === null);
    // B = 20·d at d = 2: a phase of 5·d = 10; the 2d + 1 stencil, then one per generation: it ends at state 1 + 5.
    expect(ended).toBe(6);
    expect(states.slice(ended + 1).every((s) => generationSize(s) === 3)).toBe(true);
  });

  it('is off in the paper profile, with start_phase off, and for a state without a declared phase', () => {
    expect(init(2, { options: { profile: 'paper' } }).start).toBeNull();
    expect(init(2, { options: { start_phase: 'off' } }).start).toBeNull();
    // Options that do not name start_phase (a study created before it existed) read as off.
    const s = probCmaes.init({ dim: 2, batchSize: 3, options: { profile: 'default' }, budget: 30 }, Rng.fromSeed(1)) as ProbnesState;
    expect(s.start).toBeNull();
    expect(s.params.startPhase).toBe('off');
  });

  it('several workers: an ask while the model\'s point is out gets the model\'s next step as if that point had come back as predicted', () => {
    const d = 2;
    let s = init(d, { options: { start_phase_length: 30 } });
    const history: Observation[] = [];
    const a0 = probCmaes.ask(s, { history, pending: [] }, 5);
    const batch = a0.points.map((x) => ({ x, y: rosen(x) }));
    history.push(...batch);
    s = probCmaes.tell(a0.state, { batch, history: history.slice() }) as ProbnesState;
    const model = probCmaes.ask(s, { history, pending: [] }, 1);
    const extra = probCmaes.ask(model.state, { history, pending: [model.points[0]] }, 2);
    expect(extra.points).toHaveLength(2);
    for (const x of extra.points) expect(x).not.toEqual(model.points[0]);
    expect(extra.points[0]).not.toEqual(extra.points[1]);
    // The reference: a copy of Powell's set told the pending point at the model's prediction Q(x) (the
    // kriging believer), then its next step, told at its prediction in turn, then the one after.
    const believer = structuredClone(model.state.start!.powell);
    powellObserve(believer, model.points[0], quadValue(believer.model!, model.points[0]));
    for (const x of extra.points) {
      const next = powellNext(believer, null)!;
      next.forEach((v, i) => expect(x[i]).toBeCloseTo(v, 12));
      powellObserve(believer, next, quadValue(believer.model!, next));
    }
    // The extras' results join Powell's set when they come (the tell reads every new result).
    const results = [...extra.points, model.points[0]].map((x) => ({ x, y: rosen(x) }));
    history.push(results[0]);
    const t = probCmaes.tell(extra.state, { batch: [results[0]], history: history.slice() }) as ProbnesState;
    expect(t.start!.seen).toBe(6);
    expect(t.start!.powell.points.some((p) => p.x === results[0].x || p.x.every((v, i) => v === results[0].x[i]))).toBe(true);
  });

  it('a phase that is a short prelude to the search serves extra workers with batch BQ from ν, not the model', () => {
    // d = 5, no budget: 25 evaluations < 10·d, so extras are 'search' (startPhaseExtras); with a budget of 50, 'model'.
    expect(startPhaseExtras(5, 25, null)).toBe('search');
    expect(startPhaseExtras(5, 50, 50)).toBe('model');
    expect(startPhaseExtras(2, 20, null)).toBe('model');
    const s0 = init(5);
    expect(s0.params.startPhaseExtras).toBe('search');
    const history: Observation[] = [];
    const a0 = probCmaes.ask(s0, { history, pending: [] }, 11);
    const batch = a0.points.map((x) => ({ x, y: rosen(x) }));
    history.push(...batch);
    const s1 = probCmaes.tell(a0.state, { batch, history: history.slice() }) as ProbnesState;
    const model = probCmaes.ask(s1, { history, pending: [] }, 1);
    const extra = probCmaes.ask(model.state, { history, pending: [model.points[0]] }, 1);
    const believer = structuredClone(model.state.start!.powell);
    powellObserve(believer, model.points[0], quadValue(believer.model!, model.points[0]));
    const believed = powellNext(believer, null)!;
    expect(extra.points[0].some((v, i) => Math.abs(v - believed[i]) > 1e-6)).toBe(true);
    // …and the same with start_phase_extras 'model' gives the believer's step.
    const forced = init(5, { options: { start_phase_extras: 'model' } });
    const f0 = probCmaes.ask(forced, { history: [], pending: [] }, 11);
    const f1 = probCmaes.tell(f0.state, { batch, history: history.slice() }) as ProbnesState;
    const fm = probCmaes.ask(f1, { history, pending: [] }, 1);
    const fe = probCmaes.ask(fm.state, { history, pending: [fm.points[0]] }, 1);
    fe.points[0].forEach((v, i) => expect(v).toBeCloseTo(believed[i], 12));
  });

  it('prob-xnes and prob-snes run the same phase, its steps and μ inside the box (the minimum lies beyond a face)', () => {
    // Unconstrained minimum (2.6, −0.5), outside the box: the constrained one is (2, −0.5) with f = 0.36.
    const box = { lower: [-1, -1], upper: [2, 2] };
    for (const method of ['prob-xnes', 'prob-snes'] as const) {
      const { history, state, fromPhase } = sequential(init(2, { method, box, budget: 20 }), (x) => (x[0] - 2.6) ** 2 + (x[1] + 0.5) ** 2, 30, method);
      expect(history.slice(0, 5).map((o) => o.x)).toEqual(powellStencil([0, 0], 1, { lower: box.lower, upper: box.upper }));
      // Powell's points (the phase runs up to B = 20 = 10·d, the whole budget, or ends when the iteration
      // converges; the run goes on past it) are inside; draws from ν (after the phase, or asked when the
      // model has no step left) are projected by the domain.
      expect(state.params.startPhaseLength).toBe(20);
      const phase = history.filter((_, k) => fromPhase[k]);
      expect(phase.length).toBeGreaterThanOrEqual(15);
      expect(phase.every((o) => o.x.every((v, i) => v >= box.lower[i] - 1e-12 && v <= box.upper[i] + 1e-12))).toBe(true);
      expect(Math.min(...history.map((o) => o.y))).toBeLessThan(0.36 + 1e-6);
      expect(state.mean.every((v, i) => v >= box.lower[i] && v <= box.upper[i])).toBe(true);
    }
  });

  it('a stored state\'s phase is checked: malformed or oversized phases are refused, a JSON round trip continues', () => {
    const { state } = sequential(init(2, { options: { start_phase_length: 30 } }), rosen, 9);
    expect(state.start).not.toBeNull();
    const stored = JSON.parse(JSON.stringify(state)) as StoredState;
    expect(probCmaes.migrate(stored)).toEqual(stored);
    const bad = (change: (s: ProbnesState) => void) => {
      const c = JSON.parse(JSON.stringify(state)) as ProbnesState;
      change(c);
      return () => probCmaes.migrate(c as unknown as StoredState);
    };
    expect(bad((s) => s.start!.powell.points.push(...Array.from({ length: 10 }, () => ({ x: [0, 0], y: 1 }))))).toThrow(/at most 5 points/);
    expect(bad((s) => (s.start!.powell.points[0].x = [0, 0, 0]))).toThrow(/at most 5 points/);
    expect(bad((s) => (s.start!.powell.model!.H = [[1]]))).toThrow(/quadratic/);
    expect(bad((s) => (s.start!.powell.delta = -1))).toThrow(/radii/);
    expect(bad((s) => (s.start!.untold = Array.from({ length: 1000 }, () => ({ x: [0, 0], y: 0 }))))).toThrow(/untold/);
    expect(bad((s) => delete (s as Partial<ProbnesState>).start)).toThrow(/missing/);
    expect(bad((s) => ((s.params as { startPhase: string }).startPhase = 'off'))).toThrow(/startPhase is off/);
  });

  it('the best point of the phase is never lost: μ after hand-over is the best evaluated point, also with a box', () => {
    const box = { lower: [-2, -2, -2], upper: [2, 2, 2] };
    const { state, history } = sequential(init(3, { box, budget: 30 }), rosen, 30);
    const best = history.reduce((b, o) => (o.y < b.y ? o : b));
    expect(state.start).toBeNull();
    expect(rosen(state.mean)).toBeLessThanOrEqual(best.y + 1e-12);
  });

  it('the ablation switches of the hand-over: Σ widened to a floor keeps its shape; Powell trailing asks its point in later generations', () => {
    // start_phase_length 12 in 2-D: a hand-over after the stencil and 7 of Powell's points, Σ then well below the prior's.
    const opts = { start_phase_length: 12 };
    const plain = sequential(init(2, { options: opts }), rosen, 12).state;
    const eig = (c: number[][]) => { const [a, b, d] = [c[0]![0]!, c[0]![1]!, c[1]![1]!]; const m = (a + d) / 2, r = Math.hypot((a - d) / 2, b); return [m - r, m + r]; };
    const [lo, hi] = eig(plain.cov);
    expect(plain.start).toBeNull();
    expect(hi).toBeLessThan(0.25);
    const wide = sequential(init(2, { options: { ...opts, start_phase_cov_floor: 0.25 } }), rosen, 12).state;
    const [wlo, whi] = eig(wide.cov);
    expect(whi).toBeCloseTo(0.25, 12);
    expect(wlo / whi).toBeCloseTo(lo! / hi!, 10); // the shape is the search's own, only its scale changes
    expect(wide.mean).toEqual(plain.mean);
    // A floor below Σ's largest variance changes nothing.
    const same = sequential(init(2, { options: { ...opts, start_phase_cov_floor: hi! / 2 } }), rosen, 12).state;
    expect(same.cov).toEqual(plain.cov);
    // Trailing: the hand-over keeps Powell's iteration, and the next generation holds its next point.
    const trail = sequential(init(2, { options: { ...opts, start_phase_trail: true } }), rosen, 12).state;
    expect(trail.trail?.seen).toBe(12);
    const expected = structuredClone(trail.trail!.powell);
    const x = powellNext(expected, null);
    expect(x).not.toBeNull();
    const asked = probCmaes.ask(trail, { history: [], pending: [] }, 3);
    expect(asked.points.some((p) => p.every((v, i) => v === x![i]))).toBe(true);
    expect((plain as ProbnesState & { trail?: unknown }).trail).toBeUndefined();
  });
});
