import { describe, expect, it } from 'vitest';
import { Rng, chiSquareQuantile, sampleMvn } from '../../src/engine/random/index.js';

describe('Rng', () => {
  it('replays the same stream from the same seed and from a JSON round trip of its state', () => {
    const a = Rng.fromSeed(42);
    const b = Rng.fromSeed(42);
    for (let i = 0; i < 100; i++) expect(a.uniform()).toBe(b.uniform());
    const snapshot = JSON.parse(JSON.stringify(a.state()));
    const next = [a.uniform(), a.normal(), a.int(10)];
    const c = Rng.fromState(snapshot);
    expect([c.uniform(), c.normal(), c.int(10)]).toEqual(next);
  });

  it('gives a fixed stream for a fixed seed (platform independence: integer-only generator)', () => {
    // Pinned values: the first outputs for seed 7, recorded from this implementation and reproduced
    // independently by a 64-bit-integer xoroshiro128+ (Blackman & Vigna, a = 24, b = 16, c = 37) in
    // Python, seeded as pure-rand seeds it (s0 = 0xFFFFFFFF:~seed, s1 = seed:0) after rng.ts's murmur3
    // scramble of the seed and 16 discarded outputs; output = low 32 bits of s0 + s1. Any change to the
    // generator or its seeding changes them, and with them every stored study's future.
    const r = Rng.fromSeed(7);
    expect(r.state().words).toHaveLength(4);
    expect([r.uint32(), r.uint32(), r.uint32(), r.uint32(), r.uint32(), r.uint32()]).toEqual([807393906, 1303826152, 1334381707, 3904267760, 4098401145, 956965521]);
    // uniform() = (first >>> 5)·2^26 + (second >>> 6), over 2^53; the same Python computation.
    expect(Rng.fromSeed(7).uniform()).toBe(0.1879860408870181);
    // Box–Muller through Math.log/cos, which may differ in the last bit between platforms.
    const n = Rng.fromSeed(7);
    expect(n.normal()).toBeCloseTo(-0.6803613682613402, 14);
    expect(n.normal()).toBeCloseTo(0.21836559245050968, 14);
  });

  it('makes different streams for neighbouring seeds', () => {
    const xs = [0, 1, 2, 3].map((s) => Rng.fromSeed(s).uniform());
    expect(new Set(xs).size).toBe(4);
  });

  it('draws uniforms in [0,1) and standard normals with the right moments (CLT bounds, 1e6 draws)', () => {
    const r = Rng.fromSeed(1);
    const n = 1_000_000;
    const z = r.normals(n);
    let m = 0, v = 0, u = 0, k = 0, outside = 0;
    for (let i = 0; i < n; i++) { m += z[i]; v += z[i] * z[i]; k += z[i] ** 4; }
    for (let i = 0; i < n; i++) { const x = r.uniform(); if (!(x >= 0 && x < 1)) outside++; u += x; }
    expect(outside).toBe(0);
    // Standard errors: mean 1/√n = 0.001; E z² = 1 with sd √2/√n = 0.0014; E z⁴ = 3 with sd √96/√n ≈ 0.0098;
    // uniform mean 1/2 with sd √(1/12)/√n ≈ 0.00029. Bounds are 5 standard errors.
    expect(Math.abs(m / n)).toBeLessThan(5e-3);
    expect(Math.abs(v / n - 1)).toBeLessThan(7e-3);
    expect(Math.abs(k / n - 3)).toBeLessThan(0.05);
    expect(Math.abs(u / n - 0.5)).toBeLessThan(1.5e-3);
  });

  it('int(n) is uniform over 0..n-1 (chi-square goodness of fit)', () => {
    const r = Rng.fromSeed(3);
    const counts = new Array(7).fill(0);
    const N = 70_000;
    for (let i = 0; i < N; i++) counts[r.int(7)]++;
    const chi2 = counts.reduce((s, c) => s + (c - N / 7) ** 2 / (N / 7), 0);
    expect(chi2).toBeLessThan(chiSquareQuantile(0.999, 6));
  });

  it('rejects bad seeds and states', () => {
    expect(() => Rng.fromSeed(Number.NaN)).toThrow(RangeError);
    expect(() => Rng.fromState({ kind: 'xoroshiro128plus', words: [1, 2] })).toThrow(RangeError);
  });

  it('samples N(m, LLᵀ) with the right mean and covariance (Monte Carlo, 2e5 draws)', () => {
    const r = Rng.fromSeed(11);
    const mean = [1, -2];
    const L = [[2, 0], [0.6, 0.8]]; // Σ = [[4, 1.2], [1.2, 1]]
    const n = 200_000;
    let m0 = 0, m1 = 0, c00 = 0, c01 = 0, c11 = 0;
    for (let i = 0; i < n; i++) {
      const x = sampleMvn(r, mean, L);
      m0 += x[0]; m1 += x[1];
      c00 += (x[0] - 1) ** 2; c01 += (x[0] - 1) * (x[1] + 2); c11 += (x[1] + 2) ** 2;
    }
    // sd of the sample mean of x0 is 2/√n ≈ 0.0045; of the covariance entries ≈ √(2·16)/√n ≈ 0.013.
    expect(m0 / n).toBeCloseTo(1, 1);
    expect(Math.abs(m1 / n + 2)).toBeLessThan(0.01);
    expect(Math.abs(c00 / n - 4)).toBeLessThan(0.07);
    expect(Math.abs(c01 / n - 1.2)).toBeLessThan(0.04);
    expect(Math.abs(c11 / n - 1)).toBeLessThan(0.02);
  });
});

describe('chiSquareQuantile', () => {
  it('matches published values', () => {
    // ALGORITHM.md §1 (χ²_d(0.9973)), and standard χ² tables (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.4).
    expect(chiSquareQuantile(0.9973, 2)).toBeCloseTo(11.829, 3);
    expect(chiSquareQuantile(0.9973, 4)).toBeCloseTo(16.251, 3);
    expect(chiSquareQuantile(0.9973, 10)).toBeCloseTo(26.901, 3);
    expect(chiSquareQuantile(0.95, 1)).toBeCloseTo(3.841, 3);
    expect(chiSquareQuantile(0.95, 10)).toBeCloseTo(18.307, 3);
    expect(chiSquareQuantile(0.99, 5)).toBeCloseTo(15.086, 3);
    expect(chiSquareQuantile(0.5, 2)).toBeCloseTo(2 * Math.log(2), 10); // exact: χ²₂ is Exp(1/2)
  });
  it('rejects p outside (0,1)', () => {
    expect(() => chiSquareQuantile(1, 2)).toThrow(RangeError);
    expect(() => chiSquareQuantile(0.5, 0)).toThrow(RangeError);
  });
});
