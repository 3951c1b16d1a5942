/**
 * The hypervolume. Evidence: closed forms worked by hand (boxes by inclusion–exclusion, staircases of
 * points on a line), a seeded Monte Carlo estimate within 4 standard errors, the 2-D sweep against
 * WFG's recursion, contributions against HV(P) − HV(P \ {p}), and reference values from Optuna's WFG
 * (Debian python3-optuna 3.1.0, `optuna._hypervolume.WFG().compute(P, r)`, run once offline on the
 * point sets `optunaSet` builds; the script is in that function's comment).
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, NonFiniteError } from '../../../src/engine/errors.js';
import {
  deriveReferencePoint,
  hypervolume,
  hypervolume2d,
  hypervolumeContributions,
  hypervolumeImprovement,
  hypervolumeWfg,
} from '../../../src/engine/multi/hypervolume.js';
import { dominates } from '../../../src/engine/multi/pareto.js';
import { Rng } from '../../../src/engine/random/index.js';

/**
 * The sets given to Optuna, rebuilt bit for bit (integers, one division, one square root: all
 * correctly rounded in IEEE arithmetic in both languages). The Python that produced the values:
 *   u = [((i + 1) * 7919 + (j + 1) * 104729 + i * j * 31 + salt) % 997 / 997 for j in range(m)]
 *   u = [v / sqrt(sum(v * v for v in u)) for v in u] if i % 2 == 0 else [1.2 * v for v in u]
 *   WFG().compute(np.array(points), np.full(m, 1.5))
 */
function optunaSet(n: number, m: number, salt: number): number[][] {
  return Array.from({ length: n }, (_, i) => {
    const u = Array.from({ length: m }, (_, j) => (((i + 1) * 7919 + (j + 1) * 104729 + i * j * 31 + salt) % 997) / 997);
    if (i % 2 === 1) return u.map((v) => 1.2 * v);
    const s = Math.sqrt(u.reduce((a, v) => a + v * v, 0)) || 1;
    return u.map((v) => v / s);
  });
}

const OPTUNA_WFG: [n: number, m: number, salt: number, hv: number][] = [
  [12, 2, 1, 1.1491591915828363],
  [30, 3, 2, 2.407919524779724],
  [40, 4, 3, 3.623610417136468],
  [25, 5, 4, 4.130600973900076],
  [60, 3, 5, 2.6674123877725027],
];

function uniformPoints(rng: Rng, n: number, m: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: m }, () => rng.uniform()));
}

/** Points near the simplex Σ f = 1 (mostly mutually non-dominated), jittered. */
function frontLike(rng: Rng, n: number, m: number): number[][] {
  return Array.from({ length: n }, () => {
    const e = Array.from({ length: m }, () => -Math.log(rng.uniformOpen()));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s + 0.05 * rng.uniform());
  });
}

describe('closed forms', () => {
  it('one box, two boxes by inclusion–exclusion, and nothing outside the reference point', () => {
    expect(hypervolume([[1, 2, 3]], [2, 4, 7])).toBe(1 * 2 * 4);
    // [0,2]×[0,2]×[1,2] (4) ∪ [1,2]×[1,2]×[0,2] (2), overlapping in [1,2]³ (1): 5.
    expect(hypervolume([[0, 0, 1], [1, 1, 0]], [2, 2, 2])).toBeCloseTo(5, 14);
    expect(hypervolume([[0, 0, 1], [1, 1, 0], [2, 0, 0], [0, 3, 0]], [2, 2, 2])).toBeCloseTo(5, 14);
    expect(hypervolume([], [1, 1])).toBe(0);
    expect(hypervolume([[1, 0]], [1, 1])).toBe(0); // on the boundary: no volume
    expect(hypervolume([[3]], [5])).toBe(2);
  });

  it('a line of points in 2-D: Σ_{i=1}^{n−1} (1 − i/n)/n = (n − 1)/(2n)', () => {
    for (const n of [1, 2, 7, 50]) {
      const pts = Array.from({ length: n + 1 }, (_, i) => [i / n, 1 - i / n]);
      expect(hypervolume2d(pts, [1, 1])).toBeCloseTo((n - 1) / (2 * n), 13);
      expect(hypervolumeWfg(pts, [1, 1])).toBeCloseTo((n - 1) / (2 * n), 13);
    }
  });

  it('a line of points in 3-D, p_i = (i/n, i/n, 1 − i/n): Σ_{k<n} k²/n³ = (n − 1)(2n − 1)/(6n²)', () => {
    // The slab z ∈ [1 − i/n, 1 − (i−1)/n] is covered by p_i's square [i/n, 1]², the largest there.
    for (const n of [3, 10, 40]) {
      const pts = Array.from({ length: n + 1 }, (_, i) => [i / n, i / n, 1 - i / n]);
      expect(hypervolume(pts, [1, 1, 1])).toBeCloseTo(((n - 1) * (2 * n - 1)) / (6 * n * n), 13);
    }
  });

  it('matches Optuna 3.1.0’s WFG on sets with m = 2…5 (reference values pasted from one offline run)', () => {
    for (const [n, m, salt, hv] of OPTUNA_WFG) {
      const pts = optunaSet(n, m, salt);
      expect(hypervolume(pts, Array(m).fill(1.5))).toBeCloseTo(hv, 12);
    }
  });
});

describe('against independent computations', () => {
  it('integer points: HV counts the unit cells [u, u + 1] some point dominates (m = 3, 4; many ties)', () => {
    const rng = Rng.fromSeed(12);
    for (const m of [3, 4]) {
      for (let t = 0; t < 10; t++) {
        const pts = Array.from({ length: 5 + rng.int(30) }, () => Array.from({ length: m }, () => rng.int(5)));
        let cells = 0;
        for (let code = 0; code < 5 ** m; code++) {
          const u = Array.from({ length: m }, (_, i) => Math.floor(code / 5 ** i) % 5);
          if (pts.some((p) => p.every((v, i) => v <= u[i]))) cells++;
        }
        expect(hypervolume(pts, Array(m).fill(5))).toBe(cells);
      }
    }
  });

  it('many copies of one point span one box (the recursion drops duplicates)', () => {
    expect(hypervolume(Array.from({ length: 40 }, () => [0.5, 0.5, 0.5]), [1, 1, 1])).toBe(0.125);
    // Boxes 2·1·1·1 and 1·2·1·1 meeting in [1, 2]⁴: 2 + 2 − 1 = 3.
    expect(hypervolume(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? [0, 1, 1, 1] : [1, 0, 1, 1])), [2, 2, 2, 2])).toBe(3);
  });

  it('the 2-D sweep equals WFG’s recursion on seeded random sets with ties', () => {
    const rng = Rng.fromSeed(3);
    for (let t = 0; t < 50; t++) {
      const pts = t % 2 === 0 ? uniformPoints(rng, 1 + rng.int(60), 2) : Array.from({ length: 30 }, () => [rng.int(5), rng.int(5)]);
      const r = t % 2 === 0 ? [1.1, 0.9] : [4.5, 5];
      expect(hypervolumeWfg(pts, r)).toBeCloseTo(hypervolume2d(pts, r), 12);
    }
  });

  it('agrees with a Monte Carlo estimate within 4 standard errors (m = 3 and 4, 2·10⁵ draws)', () => {
    const rng = Rng.fromSeed(17);
    for (const m of [3, 4]) {
      const pts = frontLike(rng, 25, m);
      const r = Array(m).fill(1.05);
      const lo = Array.from({ length: m }, (_, i) => Math.min(...pts.map((p) => p[i])));
      const box = lo.reduce((v, l, i) => v * (r[i] - l), 1);
      const N = 200_000;
      let hit = 0;
      for (let k = 0; k < N; k++) {
        const u = lo.map((l, i) => l + rng.uniform() * (r[i] - l));
        if (pts.some((p) => p.every((v, i) => v <= u[i]))) hit++;
      }
      const p = hit / N;
      const estimate = p * box;
      const se = box * Math.sqrt((p * (1 - p)) / N);
      expect(se).toBeGreaterThan(0);
      expect(Math.abs(hypervolume(pts, r) - estimate)).toBeLessThan(4 * se);
    }
  });

  it('is invariant to order and to dominated or duplicate points, and grows with a new front point', () => {
    const rng = Rng.fromSeed(8);
    const pts = frontLike(rng, 20, 3);
    const r = [1.2, 1.2, 1.2];
    const hv = hypervolume(pts, r);
    expect(hypervolume([...pts].reverse(), r)).toBeCloseTo(hv, 13);
    expect(hypervolume([...pts, pts[0], pts[3].map((v) => v + 0.01)], r)).toBeCloseTo(hv, 13);
    expect(hypervolume([...pts, [0, 0, 1.1]], r)).toBeGreaterThan(hv);
  });
});

describe('contributions and improvement', () => {
  it('contributions equal HV(P) − HV(P \\ {p}); dominated and duplicated points contribute 0', () => {
    const rng = Rng.fromSeed(21);
    for (const m of [2, 3, 4]) {
      const pts = frontLike(rng, 15, m);
      pts.push(pts[2].map((v) => v + 0.02), [...pts[4]]);
      const r = Array(m).fill(1.3);
      const all = hypervolume(pts, r);
      const contrib = hypervolumeContributions(pts, r);
      pts.forEach((_, i) => {
        const without = pts.filter((_, j) => j !== i);
        expect(contrib[i]).toBeCloseTo(all - hypervolume(without, r), 12);
      });
      expect(contrib[15]).toBe(0);
      expect(contrib[4]).toBe(0);
      expect(contrib[16]).toBe(0);
    }
  });

  it('2-D contributions (the windowed sweep) equal HV(P) − HV(P \\ {p}) on integer sets with ties', () => {
    const rng = Rng.fromSeed(30);
    for (let t = 0; t < 40; t++) {
      const pts = Array.from({ length: 2 + rng.int(25) }, () => [rng.int(6), rng.int(6)]);
      const r = [6, 6];
      const all = hypervolume(pts, r);
      const contrib = hypervolumeContributions(pts, r);
      pts.forEach((_, i) => expect(contrib[i]).toBe(all - hypervolume(pts.filter((_, j) => j !== i), r)));
    }
  });

  it('2-D contributions by hand: (f1_next − f1)(f2_prev − f2) on the sorted front', () => {
    // front (0,3) (1,1) (2,0), r = (3,4): (1 − 0)(4 − 3) = 1; (2 − 1)(3 − 1) = 2; (3 − 2)(1 − 0) = 1.
    expect(hypervolumeContributions([[1, 1], [0, 3], [2, 0]], [3, 4])).toEqual([2, 1, 1]);
  });

  it('improvement equals HV(P ∪ {p}) − HV(P), and is 0 for a dominated, equal or outside point', () => {
    const rng = Rng.fromSeed(4);
    for (const m of [2, 3]) {
      const front = frontLike(rng, 12, m);
      const r = Array(m).fill(1.2);
      for (let k = 0; k < 20; k++) {
        const p = Array.from({ length: m }, () => rng.uniform());
        const expected = hypervolume([...front, p], r) - hypervolume(front, r);
        expect(hypervolumeImprovement(p, front, r)).toBeCloseTo(expected, 12);
        if (front.some((q) => dominates(q, p))) expect(hypervolumeImprovement(p, front, r)).toBe(0);
      }
      expect(hypervolumeImprovement(front[0], front, r)).toBe(0);
      expect(hypervolumeImprovement(Array(m).fill(1.2), front, r)).toBe(0);
    }
    expect(hypervolumeImprovement([0.5, 0.5], [], [1, 1])).toBe(0.25);
  });
});

describe('the derived reference point (BoTorch’s infer_reference_point, in minimisation)', () => {
  it('nadir + 0.1·range over the non-dominated points', () => {
    // front (0,4) (1,2) (4,0): nadir (4,4), ideal (0,0); the dominated (9,9) does not count.
    const r = deriveReferencePoint([[0, 4], [1, 2], [4, 0], [9, 9]]);
    expect(r[0]).toBeCloseTo(4.4, 14);
    expect(r[1]).toBeCloseTo(4.4, 14);
    // An objective without range is moved by 0.1·1e-7.
    expect(deriveReferencePoint([[0, 1, 5], [1, 0, 5]])[2]).toBe(5 + 1e-8);
    expect(deriveReferencePoint([[0, 4], [4, 0]], 0.5)).toEqual([6, 6]);
  });

  it('one non-dominated point p: p + 0.1·|p| (every point of the set strictly inside it)', () => {
    const r = deriveReferencePoint([[2, -3], [5, 5]]);
    expect(r[0]).toBeCloseTo(2.2, 14);
    expect(r[1]).toBeCloseTo(-2.7, 14);
    expect(deriveReferencePoint([[0, 0]])).toEqual([1e-8, 1e-8]);
    expect(hypervolume([[2, -3]], r)).toBeGreaterThan(0);
  });

  it('refuses bad input', () => {
    expect(() => deriveReferencePoint([])).toThrow(InvalidInputError);
    expect(() => deriveReferencePoint([[1, 2]], -1)).toThrow(InvalidInputError);
    expect(() => hypervolume([[1, 2, 3]], [4, 4])).toThrow(InvalidInputError);
    expect(() => hypervolume([[1, 2]], [4, Number.NaN])).toThrow(InvalidInputError);
    expect(() => hypervolume2d([[1, 2, 3]], [4, 4, 4])).toThrow(InvalidInputError);
  });
});

describe('hostile input', () => {
  it('a volume that overflows a double throws instead of returning ∞ or NaN', () => {
    expect(() => hypervolume([[-1e300, -1e300]], [1e300, 1e300])).toThrow(NonFiniteError);
    expect(() => hypervolume([[-1e300, -1e300, 0]], [1e300, 1e300, 1])).toThrow(NonFiniteError);
    expect(() => hypervolumeImprovement([-1e300, -1e300], [[0, 0]], [1e300, 1e300])).toThrow(NonFiniteError);
    expect(() => hypervolumeContributions([[-1e300, -1e300], [0, -1e301]], [1e300, 1e300])).toThrow(NonFiniteError);
    expect(() => deriveReferencePoint([[-1.7e308, 1.7e308], [1.7e308, -1.7e308]])).toThrow(NonFiniteError);
    expect(hypervolume([[-1e150, -1e150]], [1e150, 1e150])).toBeCloseTo(4e300, -290);
  });
});
