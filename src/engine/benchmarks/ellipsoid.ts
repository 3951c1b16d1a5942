/**
 * Rotated ellipsoid: f(x) = Σ_i 10^{6·i/(d−1)} (R x)_i², i = 0…d−1, condition number 1e6, with a
 * fixed orthogonal R drawn from a seed (QR of a Gaussian matrix by Gram–Schmidt). A rotated,
 * ill-conditioned quadratic is the classic test that a full-covariance method learns the metric
 * (a diagonal method such as SNES cannot). f* = 0 at 0.
 */
import { Rng } from '../random/index.js';
import type { Benchmark, BenchmarkDef } from './types.js';
import { checkDim, cube } from './types.js';

export const ELLIPSOID_ROTATION_SEED = 20240607;
export const ELLIPSOID_CONDITION = 1e6;

/** A d×d orthogonal matrix (rows orthonormal), deterministic in `seed`. */
export function randomRotation(d: number, seed: number): number[][] {
  const rng = Rng.fromSeed(seed);
  const rows: number[][] = [];
  while (rows.length < d) {
    const v = Array.from(rng.normals(d));
    // Modified Gram–Schmidt against the rows already accepted.
    for (const r of rows) {
      let p = 0;
      for (let k = 0; k < d; k++) p += v[k] * r[k];
      for (let k = 0; k < d; k++) v[k] -= p * r[k];
    }
    const n = Math.hypot(...v);
    if (n > 1e-8) rows.push(v.map((t) => t / n)); // a degenerate draw is simply redrawn
  }
  return rows;
}

export const ROTATED_ELLIPSOID: BenchmarkDef = {
  name: 'rotated-ellipsoid',
  dim: 'any',
  defaultDim: 2,
  make(d: number): Benchmark {
    if (!(Number.isInteger(d) && d >= 1)) throw new RangeError(`rotated-ellipsoid: invalid dimension ${d}`);
    const R = randomRotation(d, ELLIPSOID_ROTATION_SEED);
    const w = Array.from({ length: d }, (_, i) => (d === 1 ? 1 : ELLIPSOID_CONDITION ** (i / (d - 1))));
    const f = (x: readonly number[]): number => {
      checkDim('rotated-ellipsoid', x, d);
      let s = 0;
      for (let i = 0; i < d; i++) {
        let z = 0;
        for (let k = 0; k < d; k++) z += R[i][k] * x[k];
        s += w[i] * z * z;
      }
      return s;
    };
    return {
      name: 'rotated-ellipsoid',
      dim: d,
      f,
      optimum: 0,
      argmin: Array(d).fill(0),
      bounds: cube(d, -5, 5),
      source: `Σ 10^(6i/(d−1)) (Rx)_i², R orthogonal from seed ${ELLIPSOID_ROTATION_SEED}`,
    };
  },
};
