/**
 * The BBOB suite (src/engine/benchmarks/bbob.ts). Expected values come from: the reference values of
 * an independent implementation (test/fixtures/bbob, the original BBOB 2009 Python module), which
 * also pins the instance generator; the definitions in RR-6829, worked by hand in the comments.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BBOB_FUNCTIONS, bbobProblem, type BbobProblem } from '../../src/engine/benchmarks/bbob.js';
import { R_OF } from '../../src/engine/benchmarks/bbob/f01-f14.js';
import { bbobSeed, bbobUniform, lcgStep } from '../../src/engine/benchmarks/bbob/instances.js';
import { tosz } from '../../src/engine/benchmarks/bbob/transforms.js';
import { probeMinimum } from '../../bench/lib/bbob-probe.js';
import { getBenchmark } from '../../src/engine/benchmarks/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { rotation } from '../helpers/numeric.js';

interface RefRecord {
  f: number;
  d: number;
  instance: number;
  f_opt: number;
  x_opt: number[];
  points: number[][];
  values: number[];
}
const REF: RefRecord[] = JSON.parse(readFileSync(new URL('../fixtures/bbob/reference-values.json', import.meta.url), 'utf8')).functions;
const FNS = Array.from({ length: BBOB_FUNCTIONS }, (_, i) => i + 1);

/** Row k of R as a direction: x_opt + t·Rᵀe_k maps to R(x − x_opt) = t·e_k. */
const rowOf = (R: Float64Array, d: number, k: number): number[] => Array.from(R.subarray(k * d, (k + 1) * d));
const along = (p: BbobProblem, dir: number[], t: number): number[] => p.argmin.map((v, i) => v + t * dir[i]);

describe('reference values (an independent implementation, instances 1–5, d = 2, 5, 10, 20)', () => {
  it('has every function, dimension and instance', () => {
    expect(REF).toHaveLength(24 * 4 * 5);
  });

  it('x_opt and f_opt equal the reference, so instance k is the field\'s instance k', () => {
    for (const r of REF) {
      const p = bbobProblem(r.f, r.d, r.instance);
      expect(p.optimum, `f${r.f} d=${r.d} i=${r.instance}`).toBe(r.f_opt);
      p.argmin.forEach((v, k) => expect(Math.abs(v - r.x_opt[k]), `f${r.f} d=${r.d} i=${r.instance} x_opt[${k}]`).toBeLessThan(1e-12));
    }
  });

  it('every value matches to relative 1e-9', () => {
    // Relative to the larger of |f| and |f − f_opt|: f_opt is an added constant, and where f − f_opt
    // nearly cancels it (f18, d = 2, instance 1: −0.54 = 16.40 − 16.94) |f| alone would measure the
    // cancellation, not the function. The largest discrepancies (f19, f23, f16: ~6e-10) are floating
    // point: cos of Rosenbrock values up to ~10⁵, 2^32·z and 3^11·z amplify the last bit of z.
    let worst = 0;
    for (const r of REF) {
      const p = bbobProblem(r.f, r.d, r.instance);
      r.points.forEach((x, i) => {
        const scale = Math.max(Math.abs(r.values[i]), Math.abs(r.values[i] - r.f_opt));
        const rel = Math.abs(p.f(x) - r.values[i]) / scale;
        worst = Math.max(worst, rel);
        expect(rel, `f${r.f} d=${r.d} i=${r.instance} point ${i}`).toBeLessThan(1e-9);
      });
    }
    expect(worst).toBeGreaterThan(0); // the comparison ran on real differences, not on the same numbers
  });
});

describe('the optimum', () => {
  it('f(x_opt) = f_opt for every function, d ∈ {2, 3, 5, 10, 20}, instances 1–5', () => {
    for (const fn of FNS) {
      for (const d of [2, 3, 5, 10, 20]) {
        for (let k = 1; k <= 5; k++) {
          const p = bbobProblem(fn, d, k);
          // f20's constant 418.9828872724339 and x_opt's 4.2096874633 are rounded: ~4e-15 remains.
          expect(Math.abs(p.f(p.argmin) - p.optimum), `f${fn} d=${d} i=${k}`).toBeLessThan(1e-12);
          expect(p.argmin.every((v) => Math.abs(v) <= 5)).toBe(true);
        }
      }
    }
  });

  it('no f below f_opt on 10^5 points per function at d = 5 (10^6: npm run bench:bbob-check)', () => {
    // lib/bbob-probe.ts: half uniform in [−5, 5]^5, half at log-uniform distances 10^−8…10^0.5 around x_opt.
    const rng = Rng.fromSeed(7);
    for (const fn of FNS) expect(probeMinimum(bbobProblem(fn, 5, 1 + (fn % 5)), 100_000, rng), `f${fn}`).toBeGreaterThanOrEqual(-1e-12);
  });

  it('f5: f = f_opt on the whole orthant beyond the corner x_opt (the optimum is on the boundary)', () => {
    const p = bbobProblem(5, 4, 2);
    expect(p.argmin.every((v) => Math.abs(v) === 5)).toBe(true);
    expect(p.f(p.argmin.map((v) => 1.5 * v))).toBe(p.optimum);
    expect(p.f(p.argmin.map((v, i) => (i === 0 ? 0.9 * v : v)))).toBeGreaterThan(p.optimum);
  });
});

describe('invariances stated in the definitions', () => {
  const rng = Rng.fromSeed(11);
  const randomX = (d: number) => Array.from({ length: d }, () => 10 * rng.uniform() - 5);

  it('f1–f5 ("separable functions") are additively separable: f(x) + f(y) = f(x with x_i = y_i) + f(y with y_i = x_i)', () => {
    for (const fn of [1, 2, 3, 4, 5]) {
      const p = bbobProblem(fn, 5, 3);
      for (let rep = 0; rep < 20; rep++) {
        const x = randomX(5), y = randomX(5), i = rep % 5;
        const xs = x.map((v, k) => (k === i ? y[i] : v)), ys = y.map((v, k) => (k === i ? x[i] : v));
        const lhs = p.f(x) + p.f(y), rhs = p.f(xs) + p.f(ys);
        expect(Math.abs(lhs - rhs), `f${fn}`).toBeLessThan(1e-9 * (1 + Math.abs(lhs)));
      }
    }
  });

  it('f10, f11 and f14² are separable in u = R(x − x_opt) (rotated ellipsoid, discus; different powers under its square root)', () => {
    for (const fn of [10, 11, 14]) {
      const d = 5, p = bbobProblem(fn, d, 2), R = R_OF(d, bbobSeed(fn, 2));
      const toX = (u: number[]) => p.argmin.map((v, j) => v + u.reduce((s, uk, k) => s + R[k * d + j] * uk, 0)); // x = x_opt + Rᵀu
      const g = (u: number[]) => (fn === 14 ? (p.f(toX(u)) - p.optimum) ** 2 : p.f(toX(u)));
      for (let rep = 0; rep < 20; rep++) {
        const u = randomX(d), w = randomX(d), i = rep % d;
        const us = u.map((v, k) => (k === i ? w[i] : v)), ws = w.map((v, k) => (k === i ? u[i] : v));
        const lhs = g(u) + g(w), rhs = g(us) + g(ws);
        expect(Math.abs(lhs - rhs), `f${fn}`).toBeLessThan(1e-9 * (1 + Math.abs(lhs)));
      }
    }
  });

  it('f1 depends only on ‖x − x_opt‖ (rotations about x_opt leave it unchanged)', () => {
    const d = 5, p = bbobProblem(1, d, 4), P = rotation(d, 3);
    for (let rep = 0; rep < 10; rep++) {
      const v = randomX(d), Pv = P.map((row) => row.reduce((s, r, k) => s + r * v[k], 0));
      expect(p.f(along(p, v, 1))).toBeCloseTo(p.f(along(p, Pv, 1)), 9);
    }
  });

  it('f7 is piecewise constant (plateaus): a 1e-9 step changes f at almost no random point', () => {
    const d = 5, p = bbobProblem(7, d, 1);
    let same = 0;
    for (let rep = 0; rep < 1000; rep++) {
      const x = randomX(d);
      if (p.f(x) === p.f(x.map((v) => v + 1e-9))) same++;
    }
    expect(same).toBeGreaterThan(990); // only a step across a plateau edge (probability ~1e-8) or the |ẑ₁|/10⁴ slope can change it
  });

  it('instances differ: x_opt and f_opt change with the instance, and reproduce with it', () => {
    const a = bbobProblem(3, 5, 1), b = bbobProblem(3, 5, 2), a2 = bbobProblem(3, 5, 1);
    expect(a.argmin).not.toEqual(b.argmin);
    expect(a.optimum).not.toBe(b.optimum);
    expect(a2.argmin).toEqual(a.argmin);
    expect(a2.f([1, 2, 3, 4, 5])).toBe(a.f([1, 2, 3, 4, 5]));
  });
});

describe('values at points derived by hand from the definitions', () => {
  it('f1 Sphere: x = x_opt + (1, 2, 0, 0, 0) → 1 + 4 = 5', () => {
    const p = bbobProblem(1, 5, 1);
    expect(p.f(along(p, [1, 2, 0, 0, 0], 1)) - p.optimum).toBeCloseTo(5, 12);
  });

  it('f2 Ellipsoid: x_opt ± e_1 → T_osz(±1)² = 1; x_opt + e_D → 10⁶·T_osz(1)² = 10⁶ (T_osz(±1) = ±e^{0 + 0.049(sin 0 + sin 0)} = ±1)', () => {
    const p = bbobProblem(2, 5, 1);
    expect(p.f(along(p, [1, 0, 0, 0, 0], 1)) - p.optimum).toBeCloseTo(1, 9);
    expect(p.f(along(p, [1, 0, 0, 0, 0], -1)) - p.optimum).toBeCloseTo(1, 9);
    expect((p.f(along(p, [0, 0, 0, 0, 1], 1)) - p.optimum) / 1e6).toBeCloseTo(1, 12);
  });

  it('f3 Rastrigin, d = 2: x_opt + e_1 → z = (1, 0): 10(2 − cos 2π − 1) + 1 = 1; x_opt + e_2 → z = (0, √10): 10(1 − cos 2π√10) + 10', () => {
    // T_osz(1) = 1, T_asy^0.2(1) = 1^{…} = 1, Λ^10 = diag(1, √10).
    const p = bbobProblem(3, 2, 1);
    expect(p.f(along(p, [1, 0], 1)) - p.optimum).toBeCloseTo(1, 9);
    expect(p.f(along(p, [0, 1], 1)) - p.optimum).toBeCloseTo(10 * (1 - Math.cos(2 * Math.PI * Math.sqrt(10))) + 10, 9);
  });

  it('f5 Linear slope, d = 2: at 0, Σ 5|s_i| = 5(10⁰ + 10¹) = 55', () => {
    const p = bbobProblem(5, 2, 1);
    expect(p.f([0, 0]) - p.optimum).toBeCloseTo(55, 12);
  });

  it('f8 Rosenbrock, d = 5 (scale max(1, √5/8) = 1): at x_opt − 1, z = 0 → Σ_{i<5} (0 − 1)² = 4', () => {
    const p = bbobProblem(8, 5, 1);
    expect(p.f(along(p, [1, 1, 1, 1, 1], -1)) - p.optimum).toBeCloseTo(4, 12);
  });

  it('f10, f11, f14 along the rows of R: u = t·e_k gives one term of the sum', () => {
    const d = 5;
    const f10 = bbobProblem(10, d, 1), R10 = R_OF(d, bbobSeed(10, 1));
    // f10: 10^{6(k−1)/(D−1)} T_osz(t)²; k = 3 (0-based 2), t = 1 → 10³.
    expect(f10.f(along(f10, rowOf(R10, d, 2), 1)) - f10.optimum).toBeCloseTo(1e3, 7);
    // f11: 10⁶ T_osz(1)² along row 1, 1 along row 2.
    const f11 = bbobProblem(11, d, 1), R11 = R_OF(d, bbobSeed(11, 1));
    expect((f11.f(along(f11, rowOf(R11, d, 0), 1)) - f11.optimum) / 1e6).toBeCloseTo(1, 9);
    expect(f11.f(along(f11, rowOf(R11, d, 1), 1)) - f11.optimum).toBeCloseTo(1, 7);
    // f10 at t = 0.5 along row 1: T_osz(½)² = e^{2(ln ½ + 0.049(sin(10 ln ½) + sin(7.9 ln ½)))}.
    const h = Math.log(0.5);
    expect(f10.f(along(f10, rowOf(R10, d, 0), 0.5)) - f10.optimum).toBeCloseTo(Math.exp(2 * (h + 0.049 * (Math.sin(10 * h) + Math.sin(7.9 * h)))), 9);
    expect(tosz(0.5)).toBeCloseTo(Math.exp(h + 0.049 * (Math.sin(10 * h) + Math.sin(7.9 * h))), 15);
    // f14: √(|t|^{2 + 4(k−1)/(D−1)}); k = D, t = 2 → √(2⁶) = 8.
    const f14 = bbobProblem(14, d, 1), R14 = R_OF(d, bbobSeed(14, 1));
    expect(f14.f(along(f14, rowOf(R14, d, d - 1), 2)) - f14.optimum).toBeCloseTo(8, 9);
  });

  it('f12 Bent cigar: x = x_opt − Rᵀe_1 → R(x − x_opt) = −e_1 (T_asy leaves negatives), z = −Re_1: r² + 10⁶(1 − r²), r = R_11', () => {
    const d = 3, p = bbobProblem(12, d, 1), R = R_OF(d, bbobSeed(12, 1));
    const r = R[0];
    expect(p.f(along(p, rowOf(R, d, 0), -1)) - p.optimum).toBeCloseTo(r * r + 1e6 * (1 - r * r), 5);
  });
});

describe('generator and registry', () => {
  it('the generator steps the minimal-standard LCG (Park & Miller 1988: from seed 1, step 10 000 is 1043618065)', () => {
    let s = 1;
    for (let i = 0; i < 10000; i++) s = lcgStep(s);
    expect(s).toBe(1043618065);
  });

  it('unif values lie in (0, 1] with mean ½', () => {
    const u = bbobUniform(1000, 12345);
    expect(Math.min(...u)).toBeGreaterThan(0);
    expect(Math.max(...u)).toBeLessThanOrEqual(1);
    const mean = u.reduce((a, b) => a + b, 0) / u.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / 1000)); // 4 standard errors
  });

  it('bbob-f1 … bbob-f24 are registered with instances; bad function, dimension or instance is rejected', () => {
    const p = getBenchmark('bbob-f7', 5, 3);
    expect(p.f([0, 0, 0, 0, 0])).toBe(bbobProblem(7, 5, 3).f([0, 0, 0, 0, 0]));
    expect(getBenchmark('bbob-f7', 5).optimum).toBe(bbobProblem(7, 5, 1).optimum);
    expect(() => getBenchmark('branin', 2, 3)).toThrow(/no instances/);
    expect(() => bbobProblem(25, 2)).toThrow(RangeError);
    expect(() => bbobProblem(1, 1)).toThrow(RangeError);
    expect(() => bbobProblem(1, 2, 0)).toThrow(RangeError);
    expect(() => bbobProblem(1, 2).f([1, 2, 3])).toThrow(RangeError);
  });
});
