/**
 * XNES, SNES (ALGORITHM.md §6) and random search: the NES utilities, convergence on the sphere,
 * rank invariance, typed errors on overflow, and random search's sampling distribution.
 */
import { describe, expect, it } from 'vitest';
import { EngineError, NonFiniteError } from '../../src/engine/errors.js';
import { Rng } from '../../src/engine/random/index.js';
import { nesUtilities, nesUtilitiesByRank } from '../../src/engine/strategies/es-utils.js';
import { resolveOptions } from '../../src/engine/strategies/registry.js';
import { random } from '../../src/engine/strategies/random.js';
import { snes } from '../../src/engine/strategies/snes.js';
import { xnes } from '../../src/engine/strategies/xnes.js';
import type { BaseState, Strategy } from '../../src/engine/strategies/types.js';
import { logSlope, median } from '../helpers/numeric.js';

type F = (x: number[]) => number;
const NO_CTX = { history: [], pending: [] };
const sphere: F = (x) => x.reduce((s, v) => s + (v - 1) ** 2, 0);

function run<S extends BaseState>(s: Strategy<S>, f: F, d: number, lambda: number, gens: number, seed: number): { fMean: number[]; points: number[][][] } {
  let state = s.init({ dim: d, batchSize: lambda, options: resolveOptions(s.name, d) }, Rng.fromSeed(seed));
  const fMean: number[] = [];
  const points: number[][][] = [];
  for (let g = 0; g < gens; g++) {
    const a = s.ask(state, NO_CTX, lambda);
    const batch = a.points.map((x) => ({ x, y: f(x) }));
    state = s.tell(a.state, { batch, history: batch });
    points.push(a.points);
    fMean.push(sphere(state.mean));
  }
  return { fMean, points };
}

describe('NES utilities (ALGORITHM.md §6)', () => {
  it('sum to 0 and increase with rank for every λ', () => {
    for (let lambda = 1; lambda <= 60; lambda++) {
      const u = nesUtilitiesByRank(lambda);
      expect(Math.abs(u.reduce((s, v) => s + v, 0))).toBeLessThan(1e-14);
      expect(u.slice(1).every((v, r) => v >= u[r])).toBe(true);
    }
  });

  it('match hand-computed values for λ = 3', () => {
    // u_r = max(0, ln 2.5 − ln(3 − r)): r = 0 → 0, r = 1 → ln 1.25 = 0.223144, r = 2 → ln 2.5 = 0.916291;
    // normalised by their sum ln 3.125 = 1.139434, minus 1/3.
    const byRank = nesUtilitiesByRank(3);
    [-1 / 3, 0.223144 / 1.139434 - 1 / 3, 0.916291 / 1.139434 - 1 / 3].forEach((v, r) => expect(byRank[r]).toBeCloseTo(v, 5));
    expect(byRank[1]).toBeCloseTo(-0.1375, 4);
    expect(byRank[2]).toBeCloseTo(0.47084, 4);
    // Per batch entry, minimising: y = 1 is the best, y = 5 the worst.
    const u = nesUtilities([{ x: [0], y: 5 }, { x: [0], y: 1 }, { x: [0], y: 3 }]);
    expect(u).toEqual([byRank[0], byRank[2], byRank[1]]);
  });
});

describe.each([
  // Measured over 7 seeds (d = 5, λ = 8, slope of ln f(mean) over generations 50–300):
  // XNES −0.099 … −0.104, SNES −0.168 … −0.178; final f(mean) ≤ 6.5e-13 (XNES), ≤ 1e-22 (SNES).
  { s: xnes as Strategy<BaseState>, band: [-0.13, -0.075], final: 1e-10 },
  { s: snes as Strategy<BaseState>, band: [-0.22, -0.13], final: 1e-18 },
])('$s.name', ({ s, band, final }) => {
  it('converges linearly on the 5-D sphere with the default learning rates', () => {
    const runs = Array.from({ length: 5 }, (_, seed) => run(s, sphere, 5, 8, 300, seed).fMean);
    const rate = median(runs.map((f) => logSlope(f, 50)));
    expect(rate).toBeGreaterThan(band[0]);
    expect(rate).toBeLessThan(band[1]);
    for (const f of runs) expect(f[299]).toBeLessThan(final);
  });

  it('gives identical trajectories for f and 3f + 7 (rank-based utilities)', () => {
    const base = run(s, sphere, 4, 6, 40, 11).points;
    expect(run(s, (x) => 3 * sphere(x) + 7, 4, 6, 40, 11).points).toEqual(base);
  });

  it('throws a typed error, never stores a NaN, when a told point overflows the update', () => {
    // The far point is claimed as one of the generation's own samples (`asked`): xnes clips the
    // Mahalanobis length of injected points, which would keep this update finite.
    const st = { ...s.init({ dim: 2, batchSize: 3, options: resolveOptions(s.name, 2) }, Rng.fromSeed(1)), asked: [[1e200, 0]] };
    const batch = [{ x: [1e200, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [1, 0], y: 2 }];
    expect(() => s.tell(st, { batch, history: batch })).toThrow(NonFiniteError);
    expect(() => s.tell(st, { batch: [{ x: [0, 0], y: Infinity }], history: [] })).toThrow(EngineError);
  });

  it('accepts a batch of size ≠ λ (utilities recomputed for its size)', () => {
    const st = s.init({ dim: 3, batchSize: 6, options: resolveOptions(s.name, 3) }, Rng.fromSeed(2));
    const { points, state } = s.ask(st, NO_CTX, 4);
    const batch = points.map((x) => ({ x, y: sphere(x) }));
    const t = s.tell(state, { batch, history: batch });
    expect(t.generation).toBe(1);
    expect(t.mean.every(Number.isFinite)).toBe(true);
    // One point has utility 0: the distribution does not move.
    const one = s.tell(state, { batch: batch.slice(0, 1), history: batch });
    expect([one.mean, one.cov]).toEqual([state.mean, state.cov]);
  });
});

describe('random search', () => {
  it('samples the prior N(0, I) and never moves', () => {
    const d = 3;
    let st = random.init({ dim: d, batchSize: 4, options: {} }, Rng.fromSeed(3));
    const { points, state } = random.ask(st, NO_CTX, 20000);
    for (let i = 0; i < d; i++) {
      const m = points.reduce((s, p) => s + p[i], 0) / points.length;
      expect(Math.abs(m)).toBeLessThan(0.03); // ≈ 4 standard errors (1/√20000 = 0.007)
      for (let j = 0; j < d; j++) {
        const c = points.reduce((s, p) => s + p[i] * p[j], 0) / points.length;
        expect(Math.abs(c - (i === j ? 1 : 0))).toBeLessThan(0.05); // ≈ 4–5 standard errors
      }
    }
    const batch = points.slice(0, 4).map((x) => ({ x, y: sphere(x) }));
    st = random.tell(state, { batch, history: batch });
    expect([st.mean, st.cov, st.generation]).toEqual([[0, 0, 0], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], 1]);
  });
});
