/**
 * The ProbNES methods on a mixed space (src/engine/strategies/probnes-mixed.ts), two behaviours no
 * test held them to under mutation testing:
 *
 * - the estimate at the centre of ν (μ with each parameter's most probable choice) is the GP's latent
 *   posterior there in y units, predicted = yMean − yStd·m: the GP models −ỹ = −(y − yMean)/yStd, so
 *   the sign flips back (a `+` passed every test). The reference is the closed form of R&W 2006
 *   eq. 2.23–2.24 with a constant mean c, m = c + k*ᵀK⁻¹(−ỹ − c), v = s − k*ᵀK⁻¹k*, over
 *   φ(x) = [u, one-hot(c)] with the ARD squared-exponential kernel, written here with dense matrices;
 * - the centre is handed out once per generation, however the generation's points are asked for
 *   (one request for all, or several smaller ones): a state that did not record it (meanAsked)
 *   handed it out again in the same generation.
 */
import { describe, expect, it } from 'vitest';
import { getStrategy, Rng, type BaseState, type Observation } from '../../src/engine/index.js';
import type { ProbnesState } from '../../src/engine/strategies/probnes-state.js';
import type { GpHyper } from '../../src/engine/gp/types.js';
import { inverse } from '../engine/probnes-helpers.js';

const DIM = 3, CHOICES = 3, Q = 4;
const f = (x: number[]) => (x[0]! - 0.5) ** 2 + x[1]! ** 2 + (x[2] === 1 ? 0 : 1);
const strategy = getStrategy('prob-cmaes');

function start(): BaseState {
  return strategy.init({ dim: DIM, batchSize: Q, options: strategy.defaults(DIM, 'default'), box: { lower: [-3, -3, 0], upper: [3, 3, CHOICES - 1] }, categories: [[1 / 3, 1 / 3, 1 / 3]] }, Rng.fromSeed(9));
}

function run(generations: number): { state: ProbnesState; history: Observation[] } {
  let state = start();
  const history: Observation[] = [];
  for (let g = 0; g < generations; g++) {
    const a = strategy.ask(state, { history: [...history], pending: [] }, Q);
    const batch = a.points.map((x) => ({ x, y: f(x) }));
    history.push(...batch);
    state = strategy.tell(a.state, { batch, history: [...history] });
  }
  return { state: state as ProbnesState, history };
}

/** [u, one-hot(c)] for one categorical parameter of CHOICES choices. */
const phi = (u: number[], c: number) => [...u, ...Array.from({ length: CHOICES }, (_, a) => (a === c ? 1 : 0))];
const kern = (h: GpHyper, a: number[], b: number[]) => h.outputscale * Math.exp(-0.5 * a.reduce((s, v, k) => s + (v - b[k]!) ** 2 / h.lengthscales[k]! ** 2, 0));
const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);
/** The most probable choice (the first on ties). */
const mode = (q: readonly number[]) => q.reduce((b, v, a) => (v > q[b]! ? a : b), 0);
const isCentre = (x: number[], s: ProbnesState) => x[0] === s.mean[0] && x[1] === s.mean[1] && x[2] === mode(s.categorical![0]!);

describe('mixed ProbNES', () => {
  it('the estimate is the GP posterior at the centre of ν in y units (yMean − yStd·m), and close to f there', () => {
    const { state, history } = run(6);
    const g = state.gp!, h = g.hyper;
    const K = g.X.map((a, i) => g.X.map((b, j) => kern(h, a, b) + (i === j ? h.noise : 0)));
    const Ki = inverse(K);
    const centre = phi(state.mean, mode(state.categorical![0]!));
    const ks = g.X.map((x) => kern(h, x, centre));
    const m = h.constant + dot(ks, Ki.map((r) => dot(r, g.negYTilde.map((y) => y - h.constant))));
    const v = h.outputscale - dot(ks, Ki.map((r) => dot(r, ks)));
    const est = strategy.estimate!(state, history);
    expect(est.predicted!).toBeCloseTo(g.yMean - g.yStd * m, 8);
    expect(est.predicted_std!).toBeCloseTo(g.yStd * Math.sqrt(Math.max(v, 0)), 8);
    // The sign matters here: m is far from 0, so yMean + yStd·m would be another number.
    expect(Math.abs(g.yStd * m)).toBeGreaterThan(0.05);
    // And the model agrees with the function at the centre about as well as its uncertainty says.
    const truth = f([state.mean[0]!, state.mean[1]!, mode(state.categorical![0]!)]);
    expect(Math.abs(est.predicted! - truth)).toBeLessThan(Math.max(0.1, 3 * est.predicted_std!));
  });

  it('hands out the centre once per generation when the generation is asked in several requests', () => {
    let state = start() as ProbnesState;
    const history: Observation[] = [];
    for (let g = 0; g < 3; g++) {
      const first = strategy.ask(state, { history: [...history], pending: [] }, 1);
      expect(isCentre(first.points[0]!, state), `generation ${g}: the first point is the centre`).toBe(true);
      expect((first.state as ProbnesState).meanAsked).toBe(true);
      const second = strategy.ask(first.state, { history: [...history], pending: first.points }, 2);
      const third = strategy.ask(second.state, { history: [...history], pending: [...first.points, ...second.points] }, 1);
      const rest = [...second.points, ...third.points];
      expect(rest).toHaveLength(3);
      for (const x of rest) expect(isCentre(x, state), `generation ${g}: the centre again`).toBe(false);
      const batch = [...first.points, ...rest].map((x) => ({ x, y: f(x) }));
      history.push(...batch);
      state = strategy.tell(third.state, { batch, history: [...history] }) as ProbnesState;
      // A new generation: the (new) centre is due again.
      expect(state.meanAsked).toBe(false);
    }
  });
});
