/** Small numerical helpers shared by the engine tests. */
import { expect } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';

/** Least-squares slope of ln v[g] against g over g0 ≤ g < v.length (the per-generation log-progress). */
export function logSlope(v: number[], g0: number): number {
  const gs = v.slice(g0).map((_, i) => g0 + i);
  const ls = v.slice(g0).map(Math.log);
  const mg = gs.reduce((a, b) => a + b, 0) / gs.length;
  const ml = ls.reduce((a, b) => a + b, 0) / ls.length;
  let num = 0, den = 0;
  gs.forEach((g, i) => ((num += (g - mg) * (ls[i] - ml)), (den += (g - mg) ** 2)));
  return num / den;
}

export const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

/** A fixed d×d rotation (rows orthonormal): Gram–Schmidt of seeded standard normal vectors. */
export function rotation(d: number, seed: number): number[][] {
  const rng = Rng.fromSeed(seed);
  const Q: number[][] = [];
  while (Q.length < d) {
    const v = Array.from(rng.normals(d));
    for (const q of Q) {
      const p = q.reduce((s, qi, i) => s + qi * v[i], 0);
      for (let i = 0; i < d; i++) v[i] -= p * q[i];
    }
    const n = Math.hypot(...v);
    if (n > 1e-8) Q.push(v.map((vi) => vi / n));
  }
  return Q;
}

/** Two matrices of the same shape, entry by entry to `digits` decimal places (the failing entry named). */
export function expectMatrixClose(got: readonly (readonly number[])[], want: readonly (readonly number[])[], digits = 12): void {
  expect(got.length).toBe(want.length);
  got.forEach((row, i) => {
    expect(row.length, `row ${i}`).toBe(want[i]!.length);
    row.forEach((v, j) => expect(v, `[${i}][${j}]`).toBeCloseTo(want[i]![j]!, digits));
  });
}
