/**
 * Multi-objective benchmarks. Evidence: objective values worked by hand from the published formulas
 * (Zitzler, Deb & Thiele 2000; Deb, Thiele, Laumanns & Zitzler 2005; the two-bar truss as in Deb 2001
 * and pymoo's Truss2D); ZDT3's front intervals against the ten-digit values published with the
 * problem (and used by pymoo, jMetal, PlatEMO); the front's hypervolume in closed form (ZDT1: 2/3 and
 * ZDT2: 1/3 at r = (1, 1); DTLZ2: 1 − π/4, 1 − π/6) against the exact hypervolume of a dense sample
 * of the front, which must lie below it by no more than the staircase bound Σ Δf_1·Δf_2; a midpoint
 * rule for the truss's integral; and seeded random designs, none of which may beat the stated front.
 */
import { describe, expect, it } from 'vitest';
import { getMultiBenchmark, MULTI_BENCHMARKS, multiBenchmarkNames } from '../../../src/engine/benchmarks/multi.js';
import { orthantBallVolume } from '../../../src/engine/benchmarks/dtlz.js';
import { TRUSS_S_MAX, TRUSS_S_MIN, trussFrontVolume, trussOptimalDesign } from '../../../src/engine/benchmarks/truss.js';
import { ZDT3_INTERVALS } from '../../../src/engine/benchmarks/zdt.js';
import { hypervolume } from '../../../src/engine/multi/hypervolume.js';
import { Rng } from '../../../src/engine/random/index.js';

/** Σ (f1_{k+1} − f1_k)(f2_k − f2_{k+1}) over a 2-D front sorted by f1: the most a staircase can miss. */
function staircaseGap(front: number[][]): number {
  const s = [...front].sort((a, b) => a[0] - b[0]);
  let gap = 0;
  for (let k = 0; k + 1 < s.length; k++) gap += (s[k + 1][0] - s[k][0]) * Math.max(0, s[k][1] - s[k + 1][1]);
  return gap;
}

function randomX(rng: Rng, lower: number[], upper: number[]): number[] {
  return lower.map((l, i) => l + rng.uniform() * (upper[i] - l));
}

describe('registry', () => {
  it('lists the tasks and checks dimensions and objective counts', () => {
    expect(multiBenchmarkNames().sort()).toEqual(['dtlz2', 'truss2d', 'zdt1', 'zdt2', 'zdt3']);
    for (const name of multiBenchmarkNames()) {
      const b = getMultiBenchmark(name);
      expect(b.dim).toBe(MULTI_BENCHMARKS[name].defaultDim);
      expect(b.bounds.lower).toHaveLength(b.dim);
      const e = b.evaluate(b.paretoSet(3)[1]);
      expect(e.f).toHaveLength(b.objectives);
      expect(e.c).toHaveLength(b.constraints);
      expect(b.frontHypervolume()).toBeGreaterThan(0);
    }
    expect(getMultiBenchmark('dtlz2', 6, 4).objectives).toBe(4);
    expect(() => getMultiBenchmark('dtlz2', 3, 4)).toThrow(RangeError);
    expect(() => getMultiBenchmark('dtlz2', 5, 1)).toThrow(RangeError);
    expect(() => getMultiBenchmark('zdt1', 1)).toThrow(RangeError);
    expect(() => getMultiBenchmark('zdt1', 5, 3)).toThrow(RangeError);
    expect(() => getMultiBenchmark('truss2d', 4)).toThrow(RangeError);
    expect(() => getMultiBenchmark('nope')).toThrow(RangeError);
    expect(() => getMultiBenchmark('zdt1', 4).evaluate([0, 0])).toThrow(RangeError);
    expect(() => getMultiBenchmark('zdt1', 4).frontHypervolume([0.9, 1])).toThrow(RangeError);
  });
});

describe('ZDT1–3 (Zitzler, Deb & Thiele 2000)', () => {
  it('values worked by hand at x = (0.25, 0.5, 0.5): g = 1 + 9·1/2 = 5.5, √(0.25·5.5) = 1.1726039…', () => {
    const x = [0.25, 0.5, 0.5];
    const root = Math.sqrt(1.375);
    expect(getMultiBenchmark('zdt1', 3).evaluate(x).f).toEqual([0.25, expect.closeTo(5.5 - root, 13)]);
    expect(getMultiBenchmark('zdt2', 3).evaluate(x).f[1]).toBeCloseTo(5.5 - 0.0625 / 5.5, 13);
    // sin(10π·0.25) = sin(2.5π) = 1: 5.5 − √1.375 − 0.25.
    expect(getMultiBenchmark('zdt3', 3).evaluate(x).f[1]).toBeCloseTo(5.5 - root - 0.25, 13);
  });

  it('ZDT3’s front intervals are the published ones', () => {
    const published = [[0, 0.0830015349], [0.182228728, 0.2577623634], [0.4093136748, 0.4538821041], [0.6183967944, 0.6525117038], [0.8233317983, 0.8518328654]];
    expect(ZDT3_INTERVALS).toHaveLength(5);
    ZDT3_INTERVALS.forEach(([a, b], k) => {
      expect(a).toBeCloseTo(published[k][0], 9);
      expect(b).toBeCloseTo(published[k][1], 9);
    });
  });

  it('the front’s hypervolume: ZDT1 2/3 and ZDT2 1/3 at r = (1, 1), and a dense front approaches it from below', () => {
    expect(getMultiBenchmark('zdt1', 30).frontHypervolume([1, 1])).toBeCloseTo(2 / 3, 15);
    expect(getMultiBenchmark('zdt2', 30).frontHypervolume([1, 1])).toBeCloseTo(1 / 3, 15);
    for (const name of ['zdt1', 'zdt2', 'zdt3']) {
      const b = getMultiBenchmark(name, 8);
      for (const r of [b.referencePoint, [1, 1], [2, 3]]) {
        const front = b.paretoSet(4000).map((x) => b.evaluate(x).f);
        const exact = b.frontHypervolume(r);
        const sampled = hypervolume(front, r);
        expect(sampled).toBeLessThanOrEqual(exact + 1e-12);
        expect(exact - sampled).toBeLessThanOrEqual(staircaseGap(front) + 1e-12);
        expect(exact - sampled).toBeLessThan(2e-3);
      }
    }
  });

  it('its Pareto set evaluates to its front, and no random point lies below the front curve', () => {
    const rng = Rng.fromSeed(6);
    for (const name of ['zdt1', 'zdt2', 'zdt3']) {
      const b = getMultiBenchmark(name, 6);
      const front = b.front(200);
      b.paretoSet(200).forEach((x, k) => expect(b.evaluate(x).f).toEqual(front[k]));
      const curve = (f1: number): number => getMultiBenchmark(name, 2).evaluate([f1, 0]).f[1];
      for (let k = 0; k < 2000; k++) {
        const f = b.evaluate(randomX(rng, b.bounds.lower, b.bounds.upper)).f;
        expect(f[1]).toBeGreaterThanOrEqual(curve(f[0]) - 1e-12);
      }
    }
  });
});

describe('DTLZ2 (Deb, Thiele, Laumanns & Zitzler 2005)', () => {
  it('values worked by hand and the unit sphere as the front', () => {
    // M = 2, x = (1/3, 0.5, 0.7): g = 0.04, θ = π/6: f = 1.04·(cos π/6, sin π/6) = (0.9006664…, 0.52).
    const f = getMultiBenchmark('dtlz2', 3, 2).evaluate([1 / 3, 0.5, 0.7]).f;
    expect(f[0]).toBeCloseTo(1.04 * Math.cos(Math.PI / 6), 14);
    expect(f[1]).toBeCloseTo(0.52, 14);
    // M = 3, x = (0, 1, …): f_1 = cos 0 · cos(π/2) = 0, f_2 = cos 0 · sin(π/2) = 1, f_3 = sin 0 = 0.
    const g = getMultiBenchmark('dtlz2', 4, 3).evaluate([0, 1, 0.5, 0.5]).f;
    expect(g.map((v) => Math.round(v * 1e12) / 1e12)).toEqual([0, 1, 0]);
    const rng = Rng.fromSeed(2);
    for (const M of [2, 3, 5]) {
      const b = getMultiBenchmark('dtlz2', M + 3, M);
      for (const p of b.front(300)) expect(Math.hypot(...p)).toBeCloseTo(1, 13);
      for (let k = 0; k < 500; k++) expect(Math.hypot(...b.evaluate(randomX(rng, b.bounds.lower, b.bounds.upper)).f)).toBeGreaterThanOrEqual(1 - 1e-12);
    }
  });

  it('the front’s hypervolume Π r_i − V_M/2^M: 1 − π/4 and 1 − π/6 at r = 1, approached by a dense front', () => {
    expect(orthantBallVolume(2)).toBeCloseTo(Math.PI / 4, 15);
    expect(orthantBallVolume(3)).toBeCloseTo(Math.PI / 6, 15);
    expect(orthantBallVolume(4)).toBeCloseTo(Math.PI ** 2 / 2 / 16, 15); // V_4 = π²/2
    expect(orthantBallVolume(5)).toBeCloseTo((8 * Math.PI ** 2) / 15 / 32, 15); // V_5 = 8π²/15
    const b2 = getMultiBenchmark('dtlz2', 5, 2);
    expect(b2.frontHypervolume([1, 1])).toBeCloseTo(1 - Math.PI / 4, 15);
    const front2 = b2.front(4000);
    const exact2 = b2.frontHypervolume();
    expect(exact2 - hypervolume(front2, b2.referencePoint)).toBeGreaterThanOrEqual(0);
    expect(exact2 - hypervolume(front2, b2.referencePoint)).toBeLessThanOrEqual(staircaseGap(front2));
    const b3 = getMultiBenchmark('dtlz2', 5, 3);
    expect(b3.frontHypervolume([1, 1, 1])).toBeCloseTo(1 - Math.PI / 6, 15);
    const exact3 = b3.frontHypervolume();
    const coarse = exact3 - hypervolume(b3.front(100), b3.referencePoint);
    const fine = exact3 - hypervolume(b3.front(900), b3.referencePoint);
    expect(coarse).toBeGreaterThan(fine);
    expect(fine).toBeGreaterThanOrEqual(0);
    expect(fine).toBeLessThan(0.03);
  });
});

describe('the two-bar truss (Deb 2001; pymoo Truss2D)', () => {
  const b = getMultiBenchmark('truss2d');

  it('a design worked by hand, and an impossible one (no bar)', () => {
    // x = (0.005, 0.008, 2): V = 0.005√20 + 0.008√5; σ_AC = 20√20/0.01 = 8944.27…, σ_BC = 80√5/0.016 = 11180.3…
    const e = b.evaluate([0.005, 0.008, 2]);
    expect(e.f[0]).toBeCloseTo(0.005 * Math.sqrt(20) + 0.008 * Math.sqrt(5), 15);
    expect(e.f[1]).toBeCloseTo((80 * Math.sqrt(5)) / 0.016, 9);
    expect(e.c[0]).toBeCloseTo(e.f[1] - 1e5, 9);
    expect(b.evaluate([0, 0.01, 2]).c[0]).toBe(Infinity);
  });

  it('the derived front: its designs are feasible, inside the box, attain (V*(S), S), and match pymoo’s two pieces', () => {
    for (const S of [TRUSS_S_MIN, 8500, 8944.27, 8944.28, 20000, TRUSS_S_MAX]) {
      const x = trussOptimalDesign(S);
      x.forEach((v, i) => {
        expect(v).toBeGreaterThanOrEqual(b.bounds.lower[i] - 1e-15);
        expect(v).toBeLessThanOrEqual(b.bounds.upper[i] + 1e-15);
      });
      const e = b.evaluate(x);
      expect(e.f[0]).toBeCloseTo(trussFrontVolume(S), 14);
      expect(e.f[1] / S).toBeCloseTo(1, 12);
      expect(e.c[0]).toBeLessThanOrEqual(1e-9);
    }
    // The ends: (400/10⁵, 10⁵) and, at y = 3, x = (0.0025√(25/10), 0.01) (pymoo's V_max).
    expect(trussFrontVolume(TRUSS_S_MAX)).toBeCloseTo(0.004, 15);
    expect(trussFrontVolume(TRUSS_S_MIN)).toBeCloseTo(0.0025 * Math.sqrt(2.5) * 5 + 0.01 * Math.sqrt(10), 14);
    // pymoo's lower piece: S·V = (4 + y²)/(0.01 y) with y(V) = √(3200V² + 40V√(6400V² − 12) − 4).
    for (const S of [8500, 8700, 8900]) {
      const V = trussFrontVolume(S);
      const y = Math.sqrt(3200 * V * V + 40 * V * Math.sqrt(6400 * V * V - 12) - 4);
      expect(((4 + y * y) / (0.01 * y)) / V).toBeCloseTo(S, 6);
    }
    // The transition is at V = 2√5·0.01 (pymoo's T).
    expect(trussFrontVolume(4000 * Math.sqrt(5))).toBeCloseTo(2 * Math.sqrt(5) * 0.01, 14);
  });

  it('no random design beats the front: V ≥ V*(S) when feasible, V ≥ 400/S (y = 2, both stresses tight) when not', () => {
    const rng = Rng.fromSeed(13);
    let feasible = 0;
    for (let k = 0; k < 100_000; k++) {
      const [V, S] = b.evaluate(randomX(rng, b.bounds.lower, b.bounds.upper)).f;
      expect(S).toBeGreaterThanOrEqual(TRUSS_S_MIN * (1 - 1e-12));
      const least = S <= TRUSS_S_MAX ? trussFrontVolume(S) : 400 / S;
      if (!(V >= least * (1 - 1e-12))) expect.fail(`V = ${V} < ${least} at S = ${S}`);
      if (S <= TRUSS_S_MAX) feasible++;
    }
    expect(feasible).toBeGreaterThan(1000);
    // Near the front, where a slightly wrong front would be beaten: optimal designs perturbed by ±1%.
    for (let k = 0; k < 20_000; k++) {
      const x = trussOptimalDesign(TRUSS_S_MIN + rng.uniform() * (TRUSS_S_MAX - TRUSS_S_MIN));
      const moved = x.map((v, i) => Math.min(b.bounds.upper[i], Math.max(b.bounds.lower[i], v * (1 + 0.02 * (rng.uniform() - 0.5)))));
      const [V, S] = b.evaluate(moved).f;
      const least = S <= TRUSS_S_MAX ? trussFrontVolume(S) : 400 / S;
      if (!(V >= least * (1 - 1e-12))) expect.fail(`V = ${V} < ${least} at S = ${S}`);
    }
  });

  it('the closed-form hypervolume against a midpoint rule of ∫ (r_V − V*(S)) dS and a dense front', () => {
    for (const r of [b.referencePoint, [0.052, 1e5], [0.1, 2e5]]) {
      const n = 200_000;
      const h = (r[1] - TRUSS_S_MIN) / n;
      let integral = 0;
      for (let k = 0; k < n; k++) integral += (r[0] - trussFrontVolume(TRUSS_S_MIN + (k + 0.5) * h)) * h;
      expect(b.frontHypervolume(r) / integral).toBeCloseTo(1, 8);
      const front = b.front(4000);
      const sampled = hypervolume(front, r);
      expect(sampled).toBeLessThanOrEqual(b.frontHypervolume(r));
      expect(b.frontHypervolume(r) - sampled).toBeLessThanOrEqual(staircaseGap(front) + 1e-9);
    }
    expect(() => b.frontHypervolume([0.05, 1.1e5])).toThrow(RangeError);
    expect(() => b.frontHypervolume([0.06, 9e4])).toThrow(RangeError);
  });
});
