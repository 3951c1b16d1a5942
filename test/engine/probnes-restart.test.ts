/**
 * Restarts of a converged natural-gradient search (src/engine/strategies/probnes-restart.ts; docs/ALGORITHM.md
 * §33): when they fire and when not, what a restart resets, the recommendation after one, the parameters of
 * new and stored studies, and the stored record's checks.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { InvalidInputError } from '../../src/engine/errors.js';
import { resolveOptions } from '../../src/engine/strategies/registry.js';
import { STRATEGIES } from '../../src/engine/index.js';
import { ackley } from '../../src/engine/benchmarks/classic.js';
import { RESTART_DEFAULTS, restartAfterDefault } from '../../src/engine/strategies/probnes-params.js';
import { restartAfterTell } from '../../src/engine/strategies/probnes-restart.js';
import type { ProbnesState } from '../../src/engine/strategies/probnes-core.js';
import { generationSize, type Observation, type StoredState } from '../../src/engine/strategies/types.js';

const probCmaes = STRATEGIES['prob-cmaes'];

function init(d: number, options: Record<string, string | number | boolean> = {}, box: { lower: number[]; upper: number[] } | null = null): ProbnesState {
  return probCmaes.init({ dim: d, batchSize: 3, options: resolveOptions('prob-cmaes', d, options), box, budget: null }, Rng.fromSeed(0)) as ProbnesState;
}

/** The paper protocol's loop (one generation per ask, docs/ALGORITHM.md §7), every state kept. */
function run(state: ProbnesState, f: (u: number[]) => number, evals: number) {
  const history: Observation[] = [];
  const states: ProbnesState[] = [state];
  let s = state;
  while (history.length < evals) {
    const a = probCmaes.ask(s, { history, pending: [] }, Math.min(generationSize(s), evals - history.length));
    const batch = a.points.map((x) => ({ x, y: f(x) }));
    history.push(...batch);
    s = probCmaes.tell(a.state, { batch, history: history.slice() }) as ProbnesState;
    states.push(s);
  }
  return { state: s, history, states, best: Math.min(...history.map((o) => o.y)) };
}

// The paper protocol's Ackley 2-D (prior N(−1, I), so x = u − 1): the prior mean lies on Ackley's lattice of local
// minima and Powell's start phase converges to the one at (0, −0.95), f ≈ 2.58 (docs/ALGORITHM.md §29).
const ackleyU = (u: number[]) => ackley(u.map((v) => v - 1));

/** A state whose search has contracted to σ = `sd` at `mean`, tracking since evaluation 0 with best 1. */
function contracted(sd: number, mean = [0.3, -0.2], stall = { best: 1, since: 0, restarts: 0, home: null as number[] | null }): ProbnesState {
  const s = init(2);
  return { ...s, start: null, mean, cov: [[sd * sd, 0], [0, sd * sd]], stall };
}
const obs = (n: number, y = 2): Observation[] => Array.from({ length: n }, (_, i) => ({ x: [i, 0], y }));

describe('restarts of a converged search (ALGORITHM.md §33)', () => {
  it('frees the search from the local minimum Powell\'s phase converged to on Ackley 2-D', () => {
    const off = run(init(2, { restart_after: 0 }), ackleyU, 153);
    const on = run(init(2), ackleyU, 153);
    // Without restarts every later evaluation refines the local minimum (f ≈ 2.58 at (0, −0.95)).
    expect(off.best).toBeGreaterThan(2.5);
    expect(off.state.stall).toBeUndefined();
    // With them the search leaves it: the global minimum's basin (f < 0.5 only within about 0.1 of the origin).
    expect(on.state.stall!.restarts).toBeGreaterThanOrEqual(1);
    expect(on.best).toBeLessThan(0.5);
    // The two runs are the same up to the first restart.
    const first = on.states.findIndex((s) => (s.stall?.restarts ?? 0) > 0);
    expect(first).toBeGreaterThan(0);
    const n0 = on.states[first]!.stall!.since; // the evaluations told when it restarted
    expect(n0).toBeGreaterThan(20);
    expect(on.history.slice(0, n0)).toEqual(off.history.slice(0, n0));
    expect(on.history.slice(n0, n0 + 3)).not.toEqual(off.history.slice(n0, n0 + 3));
  });

  it('a restart puts ν back at the prior and keeps the converged centre as home; the estimate recommends home until the restarted search finds better', () => {
    const on = run(init(2), ackleyU, 153);
    const k = on.states.findIndex((s) => (s.stall?.restarts ?? 0) > 0);
    const before = on.states[k - 1]!, after = on.states[k]!;
    expect(after.mean).toEqual([0, 0]);
    expect(after.cov).toEqual([[1, 0], [0, 1]]);
    // home is the centre of the update that restarted, one converged step from the one before it.
    after.stall!.home!.forEach((v, i) => expect(v).toBeCloseTo(before.mean[i]!, 6));
    // The GP still holds every result (the restart changes ν only).
    expect(after.gp!.X.length).toBeGreaterThan(0);
    // Right after the restart the estimate is at home, and the GP there predicts Ackley's value at home (f ≈ 2.58,
    // the local minimum; not the prior mean's f = ackley(−1, −1) ≈ 3.63).
    const e = probCmaes.estimate!(after, []);
    expect(e.point).toEqual(after.stall!.home);
    expect(e.predicted!).toBeCloseTo(ackleyU(after.stall!.home!), 1);
    expect(e.predicted!).toBeLessThan(ackleyU([0, 0]) - 1);
    // Once the restarted search observed a value below every earlier one, home is dropped: the estimate is at μ.
    const found = on.states.findIndex((s, i) => i > k && s.stall!.best < after.stall!.best);
    expect(found).toBeGreaterThan(k);
    expect(on.states[found - 1]!.stall!.home).not.toBeNull();
    expect(on.states[found]!.stall!.home).toBeNull();
    const last = probCmaes.estimate!(on.state, []);
    expect(last.point).toBeUndefined();
    expect(last.predicted!).toBeLessThan(1);
  });

  it('fires only when ν has contracted and the best has not improved for `after` evaluations', () => {
    const { sigma } = RESTART_DEFAULTS;
    const after = restartAfterDefault(2);
    // Contracted, no improvement for exactly `after` evaluations: a restart.
    const r = restartAfterTell(contracted(sigma / 2), obs(3), obs(after));
    expect(r.stall).toEqual({ best: 1, since: after, restarts: 1, home: [0.3, -0.2] });
    expect(r.mean).toEqual([0, 0]);
    // One evaluation fewer: not yet.
    const early = restartAfterTell(contracted(sigma / 2), obs(3), obs(after - 1));
    expect(early.stall!.restarts).toBe(0);
    expect(early.mean).toEqual([0.3, -0.2]);
    // Not contracted (σ at the threshold): no restart, however long the stall.
    const wide = restartAfterTell(contracted(sigma), obs(3), obs(10 * after));
    expect(wide.stall!.restarts).toBe(0);
    expect(wide.cov).toEqual([[sigma * sigma, 0], [0, sigma * sigma]]);
  });

  it('any decrease of the best counts as an improvement by default; restart_tol sets a relative threshold', () => {
    const after = restartAfterDefault(2);
    const tiny = [{ x: [0, 0], y: 1 - 1e-15 }];
    const kept = restartAfterTell(contracted(1e-6), tiny, obs(after));
    expect(kept.stall).toEqual({ best: 1 - 1e-15, since: after, restarts: 0, home: null });
    const s = contracted(1e-6);
    const coarse = { ...s, params: { ...s.params, restart: { ...s.params.restart!, tol: 1e-12 } } };
    const fired = restartAfterTell(coarse, tiny, obs(after));
    expect(fired.stall!.restarts).toBe(1);
    expect(fired.stall!.best).toBe(1 - 1e-15);
  });

  it('a value equal to the best is no improvement; restart_tol scales with 1 + |best|; home is a copy of the converged centre', () => {
    const after = restartAfterDefault(2);
    // A tie with the best (1) at the stall's `after`-th evaluation: still no improvement, so the restart fires.
    const tie = restartAfterTell(contracted(1e-6), [{ x: [0, 0], y: 1 }], obs(after));
    expect(tie.stall!.restarts).toBe(1);
    // τ = 0.1 at best = 9: an improvement must go below 9 − 0.1·(1 + 9) = 8; 8.5 is not one, 7.9 is.
    const s = contracted(1e-6, [0.3, -0.2], { best: 9, since: 0, restarts: 0, home: null });
    const tol = { ...s, params: { ...s.params, restart: { ...s.params.restart!, tol: 0.1 } } };
    expect(restartAfterTell(tol, [{ x: [0, 0], y: 8.5 }], obs(after)).stall!.restarts).toBe(1);
    expect(restartAfterTell(tol, [{ x: [0, 0], y: 7.9 }], obs(after)).stall).toEqual({ best: 7.9, since: after, restarts: 0, home: null });
    // The record's home is its own array, not the previous state's mean (states are values: nothing may share them).
    const before = contracted(1e-6);
    const r = restartAfterTell(before, obs(3), obs(after));
    expect(r.stall!.home).toEqual(before.mean);
    expect(r.stall!.home).not.toBe(before.mean);
  });

  it('the first tracked tell starts from the best of every result so far; a restart inside a box keeps ν in it', () => {
    const s = { ...init(2, {}, { lower: [-0.25, -0.25], upper: [0.25, 0.25] }), start: null, cov: [[1e-8, 0], [0, 1e-8]] };
    const hist = [...obs(5, 3), { x: [0, 0], y: -2 }, ...obs(4, 3)];
    const t = restartAfterTell(s, obs(3, 3), hist);
    expect(t.stall).toEqual({ best: -2, since: 10, restarts: 0, home: null });
    const r = restartAfterTell({ ...t, stall: { ...t.stall!, since: 0 } }, obs(3, 3), hist);
    expect(r.stall!.restarts).toBe(1);
    // The box is half a prior sd wide: Σ₀ = I is narrowed to it (§22: each sd at most the width), as the search keeps it.
    expect(r.cov).toEqual([[0.25, 0], [0, 0.25]]);
  });

  it('new studies of the default profile have it; the paper profile, restart_after 0 and states stored before it do not', () => {
    expect(init(2).params.restart).toEqual({ after: 10, tol: 0, sigma: 1e-3 });
    expect(init(5).params.restart).toEqual({ after: 25, tol: 0, sigma: 1e-3 });
    expect(init(2, { restart_after: 25, restart_sigma: 0.01 }).params.restart).toEqual({ after: 25, tol: 0, sigma: 0.01 });
    expect(init(2, { profile: 'paper' }).params.restart).toBeUndefined();
    expect(init(2, { restart_after: 0 }).params.restart).toBeUndefined();
    // A state written before restarts existed (no params.restart) continues exactly as the search without them.
    const stored = init(2);
    const { restart: _r, ...params } = stored.params;
    const old = { ...stored, params: Object.freeze(params) } as ProbnesState;
    const a = run(old, ackleyU, 90), b = run(init(2, { restart_after: 0 }), ackleyU, 90);
    expect(a.history).toEqual(b.history);
    expect(a.state.stall).toBeUndefined();
  });

  it('a stored stall record is checked: malformed ones are refused, a JSON round trip continues', () => {
    const s = run(init(2), ackleyU, 60).state;
    const stored = JSON.parse(JSON.stringify(s)) as StoredState;
    const back = probCmaes.migrate!(stored) as ProbnesState;
    expect(back.stall).toEqual(s.stall);
    for (const bad of [
      { ...s.stall, best: null },
      { ...s.stall, since: -1 },
      { ...s.stall, restarts: 1.5 },
      { ...s.stall, home: [0] },
      { ...s.stall, home: [0, 'x'] },
      null,
    ]) {
      expect(() => probCmaes.migrate!({ ...stored, stall: bad } as unknown as StoredState)).toThrow(/stall record/);
    }
    expect(() => probCmaes.migrate!({ ...stored, params: { ...(stored as unknown as ProbnesState).params, restart: { after: -1, tol: 0, sigma: 1 } } } as unknown as StoredState)).toThrow(/restart parameters/);
    // Values JSON cannot carry but a caller may pass, and records of the wrong shape: refused with the engine's error.
    for (const bad of [{ ...s.stall, best: Infinity }, { ...s.stall, restarts: -1 }, { ...s.stall, home: [0, Number.NaN] }, 5]) {
      expect(() => probCmaes.migrate!({ ...stored, stall: bad } as unknown as StoredState)).toThrow(InvalidInputError);
    }
    const params = (stored as unknown as ProbnesState).params;
    for (const restart of [null, 5, { after: '10', tol: 0, sigma: 1e-3 }, { after: 10, tol: Number.NaN, sigma: 1e-3 }, { after: 10, tol: 0, sigma: Infinity }]) {
      expect(() => probCmaes.migrate!({ ...stored, params: { ...params, restart } } as unknown as StoredState), JSON.stringify(restart)).toThrow(InvalidInputError);
    }
    // The boundary values are valid: a stall counted from evaluation 0, no restart yet, home null.
    expect((probCmaes.migrate!({ ...stored, stall: { best: 0, since: 0, restarts: 0, home: null } } as unknown as StoredState) as ProbnesState).stall!.since).toBe(0);
    // A state stored before restarts existed (no params.restart, no stall) reads as it was.
    const { restart: _gone, ...older } = params;
    const { stall: _none, ...noStall } = stored as unknown as ProbnesState;
    const read = probCmaes.migrate!({ ...noStall, params: older } as unknown as StoredState) as ProbnesState;
    expect(read.params.restart).toBeUndefined();
    expect(read.stall).toBeUndefined();
  });
});
