/** Active set and standardisation (ALGORITHM.md §1 steps 1–2), on hand-placed points. */
import { describe, expect, it } from 'vitest';
import { chiSquareQuantile } from '../../src/engine/random/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { cholesky, fromRows, mahalanobisSq } from '../../src/engine/linalg/index.js';
import { activeSet, mahalanobisSqAll, mahalanobisSqPacked, nearestIndices, standardise } from '../../src/engine/strategies/probnes-data.js';
import type { Observation } from '../../src/engine/strategies/types.js';

const I2 = [[1, 0], [0, 1]];
const obs = (xs: number[][]) => xs.map((x) => ({ x, y: 0 }));

describe('nearestIndices', () => {
  // What activeSet did before the heap: sort every index by (d², index), keep the first `keep`, ascending.
  const bySort = (d2: number[], keep: number) => d2.map((_, j) => j).sort((a, b) => d2[a]! - d2[b]! || a - b).slice(0, keep).sort((a, b) => a - b);
  it('keeps exactly what sorting every index by (d², index) keeps, ties and all', () => {
    const rng = Rng.fromSeed(7);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(rng.uniform() * 60);
      // Few distinct values, so that many distances tie and the index decides.
      const d2 = Array.from({ length: n }, () => Math.floor(rng.uniform() * 6) / 2);
      const keep = Math.floor(rng.uniform() * (n + 3));
      expect(nearestIndices(d2, keep), `d² ${d2} keep ${keep}`).toEqual(bySort(d2, keep));
    }
  });
  it('keep 0 keeps nothing; keep ≥ n keeps every index', () => {
    expect(nearestIndices([3, 1, 2], 0)).toEqual([]);
    expect(nearestIndices([3, 1, 2], 3)).toEqual([0, 1, 2]);
    expect(nearestIndices([3, 1, 2], 9)).toEqual([0, 1, 2]);
  });
});

describe('mahalanobisSqAll', () => {
  it('is mahalanobisSq of every point, bit for bit, in every dimension (the blocked solve from d = 4 on)', () => {
    const rng = Rng.fromSeed(11);
    for (let d = 1; d <= 9; d++) {
      // Σ = A Aᵀ + I: positive definite, with correlations.
      const A = Array.from({ length: d }, () => Array.from({ length: d }, () => rng.uniform() * 2 - 1));
      const cov = A.map((r, i) => A.map((q, j) => r.reduce((s, v, k) => s + v * q[k]!, 0) + (i === j ? 1 : 0)));
      const mean = Array.from({ length: d }, () => rng.uniform());
      const pts = Array.from({ length: 50 }, () => ({ x: Array.from({ length: d }, () => rng.uniform() * 6 - 3), y: 0 }));
      const L = cholesky(fromRows(cov)).L;
      expect(Array.from(mahalanobisSqAll(L, pts, mean)), `d = ${d}`).toEqual(pts.map((p) => mahalanobisSq(L, p.x, mean)));
    }
  });
});

/** x and y of a history in the flat arrays a caller keeps (PackedHistory). */
const pack = (h: readonly Observation[]) => ({ x: Float64Array.from(h.flatMap((o) => o.x)), y: Float64Array.from(h, (o) => o.y) });

describe('the packed history (TellContext.packed)', () => {
  it('mahalanobisSqPacked is mahalanobisSqAll bit for bit, and the active set from it is the same, in every dimension', () => {
    const rng = Rng.fromSeed(12);
    for (let d = 1; d <= 7; d++) {
      const A = Array.from({ length: d }, () => Array.from({ length: d }, () => rng.uniform() * 2 - 1));
      const cov = A.map((r, i) => A.map((q, j) => 0.05 * (r.reduce((s, v, k) => s + v * q[k]!, 0) + (i === j ? 1 : 0))));
      const mean = Array.from({ length: d }, () => rng.uniform() - 0.5);
      const pts = Array.from({ length: 400 }, (_, j) => ({ x: Array.from({ length: d }, () => rng.normal() * (j % 3 === 0 ? 0.3 : 2)), y: rng.uniform() }));
      const L = cholesky(fromRows(cov)).L;
      const byObjects = mahalanobisSqAll(L, pts, mean);
      const byRows = mahalanobisSqPacked(L, pack(pts).x, pts.length, mean);
      expect(byRows.every((v, j) => Object.is(v, byObjects[j])), `d = ${d}`).toBe(true);
      // Few inside (the nearest added), many inside (the cap's nearest), and every point inside.
      for (const o of [{ minSize: 30, maxSize: 0 }, { minSize: 3, maxSize: 25 }, { minSize: 3, maxSize: 0 }]) {
        const opts = { enabled: true, quantile: 0.9973, ...o };
        expect(activeSet(pts, mean, cov, opts, pack(pts)), `d = ${d}`).toEqual(activeSet(pts, mean, cov, opts));
      }
    }
  });
  it('a packing whose sizes do not match the history is ignored, not read', () => {
    const pts = obs([[0, 0], [1, 0], [5, 5]]);
    const stale = pack(pts.slice(0, 2)); // a point short: the objects decide
    const wrongD = { x: new Float64Array(3), y: new Float64Array(3) };
    const o = { enabled: true, quantile: 0.9973, minSize: 1 };
    expect(activeSet(pts, [5, 5], I2, o, stale)).toEqual([2]);
    expect(activeSet(pts, [5, 5], I2, o, wrongD)).toEqual([2]);
    // A matching packing is what the distances are computed from (here deliberately different from the objects).
    const moved = pack(obs([[5, 5], [1, 0], [0, 0]]));
    expect(activeSet(pts, [5, 5], I2, o, moved)).toEqual([0]);
  });
});

describe('active set', () => {
  const c = chiSquareQuantile(0.9973, 2); // 11.829 (ALGORITHM.md §1)
  it('uses the squared Mahalanobis distance with a strict <', () => {
    expect(c).toBeCloseTo(11.829, 3);
    const r = Math.sqrt(c);
    // On the boundary (d² = c exactly, up to rounding of √c²) is out; just inside is in; Σ = 4I halves distances.
    const pts = obs([[0, 0], [r * 0.999, 0], [r * 1.001, 0], [0, 3 * r]]);
    expect(activeSet(pts, [0, 0], I2, { enabled: true, quantile: 0.9973, minSize: 1 })).toEqual([0, 1]);
    expect(activeSet(pts, [0, 0], [[4, 0], [0, 4]], { enabled: true, quantile: 0.9973, minSize: 1 })).toEqual([0, 1, 2]);
  });
  it('adds the nearest outside points until |A| ≥ min(q, n)', () => {
    const pts = obs([[10, 0], [0, 6], [20, 0], [0, 30]]); // all outside (d² = 100, 36, 400, 900)
    expect(activeSet(pts, [0, 0], I2, { enabled: true, quantile: 0.9973, minSize: 2 })).toEqual([0, 1]);
    expect(activeSet(pts, [0, 0], I2, { enabled: true, quantile: 0.9973, minSize: 9 })).toEqual([0, 1, 2, 3]);
  });
  it('maxSize keeps the maxSize nearest inside points (ties by history order), never fewer than min(q, n)', () => {
    // d² = 4, 1, 0, 1, 9, 2.25 (all inside χ²_2(0.9973) = 11.83); the tie at d² = 1 goes to index 1.
    const pts = obs([[2, 0], [0, 1], [0, 0], [-1, 0], [0, 3], [1.5, 0]]);
    const o = { enabled: true, quantile: 0.9973, minSize: 1 };
    expect(activeSet(pts, [0, 0], I2, { ...o, maxSize: 0 })).toEqual([0, 1, 2, 3, 4, 5]);
    expect(activeSet(pts, [0, 0], I2, { ...o, maxSize: 2 })).toEqual([1, 2]);
    expect(activeSet(pts, [0, 0], I2, { ...o, maxSize: 4 })).toEqual([1, 2, 3, 5]);
    expect(activeSet(pts, [0, 0], I2, { ...o, maxSize: 6 })).toEqual([0, 1, 2, 3, 4, 5]);
    expect(activeSet(pts, [0, 0], I2, { ...o, minSize: 3, maxSize: 2 })).toEqual([1, 2, 3]);
    // Σ scales the distances: under Σ = diag(100, 1) the points on the first axis are the near ones (d² = 0.04, 1, 0, 0.01, 9, 0.0225).
    expect(activeSet(pts, [0, 0], [[100, 0], [0, 1]], { ...o, maxSize: 3 })).toEqual([2, 3, 5]);
  });
  it('active_set = false keeps every point', () => {
    const pts = obs([[10, 0], [0, 0], [50, 50]]);
    expect(activeSet(pts, [0, 0], I2, { enabled: false, quantile: 0.9973, minSize: 1 })).toEqual([0, 1, 2]);
  });
});

describe('standardise', () => {
  it('uses the unbiased std: [1, 2, 3] → mean 2, std 1 → [−1, 0, 1]', () => {
    const s = standardise([1, 2, 3]);
    expect(s.yMean).toBe(2);
    expect(s.yStd).toBeCloseTo(1, 15);
    expect(s.yTilde).toEqual([-1, 0, 1]);
  });
  it('a single point or a std below 1e-9 gives std = 1', () => {
    expect(standardise([5]).yStd).toBe(1);
    expect(standardise([5, 5 + 1e-12]).yStd).toBe(1);
  });
});
