/**
 * The hypervolume indicator, exactly, for MINIMISATION (a caller negates objectives to maximise).
 *
 * Glossary: m = number of objectives; P = a set of points (number[] of length m); r = the reference
 * point. HV(P; r) = λ_m(⋃_{p ∈ P} [p, r]), the Lebesgue measure of the region that some point of P
 * dominates and r bounds. A point that is not strictly better than r in every objective spans no
 * volume and is ignored. The exclusive hypervolume (contribution) of p ∈ P is HV(P) − HV(P \ {p}).
 *
 * Algorithms: m = 2 by a sweep in O(n log n); m ≥ 3 by WFG (L. While, L. Bradstreet, L. Barone,
 * "A fast way of calculating exact hypervolumes", IEEE TEC 16(1), 2012): HV(P) = Σ_k exclhv(P, k)
 * over P sorted by f_1, exclhv(P, k) = inclhv(p_k) − HV(nds(limitset(P, k))), where
 * limitset(P, k) = { max(p_k, p_j) : j > k } (componentwise) and nds keeps its distinct non-dominated
 * points; the recursion ends in one or two boxes. Optuna's `optuna._hypervolume.WFG` is the same algorithm
 * (with the sweep at m = 2).
 *
 * The derived reference point follows BoTorch's `infer_reference_point` (which Ax uses to infer an
 * unset reference point; BoTorch credits Ishibuchi et al., 2011, with finding 0.1 a robust factor):
 * over the non-dominated points, r = nadir + 0.1·(nadir − ideal), with every range floored at 1e-7; a
 * single point p gives r = p + 0.1·max(|p|, 1e-7). ALGORITHM.md §32.1 says how the service is to use
 * all of this.
 */
import { InvalidInputError, NonFiniteError } from '../errors.js';
import { checkPoints, dominates, nonDominated, type Point } from './pareto.js';

const MIN_RANGE = 1e-7;

/** A volume of finite points can still overflow (ranges near 1e308): throw instead of returning ∞ or NaN. */
function finite(v: number, what: string): number {
  if (!Number.isFinite(v)) throw new NonFiniteError(`${what} is ${v}: the objectives' ranges overflow a double`);
  return v;
}

/** The volume of the box [p, r]. */
function inclusive(p: Point, r: Point): number {
  let v = 1;
  for (let i = 0; i < r.length; i++) v *= r[i] - p[i];
  return v;
}

/** The points strictly better than r in every objective, validated. */
function inside(points: readonly Point[], r: Point): Point[] {
  const m = checkPoints(points);
  checkPoints([r], 'reference point');
  if (m !== 0 && m !== r.length) throw new InvalidInputError(`points have ${m} objectives, the reference point ${r.length}`);
  return points.filter((p) => p.every((v, i) => v < r[i]));
}

/** HV in two objectives: sort by f_1, then each point that lowers the running best f_2 adds a rectangle. */
function sweep2d(points: readonly Point[], r: Point): number {
  const sorted = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let best = r[1];
  let hv = 0;
  for (const p of sorted) {
    if (p[1] < best) {
      hv += (r[0] - p[0]) * (best - p[1]);
      best = p[1];
    }
  }
  return hv;
}

type Measure = (points: readonly Point[], r: Point) => number;

/**
 * nds with duplicates dropped: copies add no volume, and WFG's recursion on k copies of one point
 * would make 2^k calls (each copy's limit set holds the other copies).
 */
function distinctFront(points: readonly Point[]): Point[] {
  const seen = new Set<string>();
  return nonDominated(points).flatMap((j) => {
    const key = points[j].join(',');
    if (seen.has(key)) return [];
    seen.add(key);
    return [points[j]];
  });
}

/**
 * WFG on points inside r, m ≥ 2: their distinct non-dominated subset, sorted by f_1, each point's
 * exclusive volume against the points after it. It never drops an objective, so its base cases are one
 * or two boxes (inclusion–exclusion); at m = 2 it is an O(n²) check on the sweep, which is what
 * `hypervolume` uses there.
 */
function wfg(points: readonly Point[], r: Point): number {
  const front = distinctFront(points);
  const n = front.length;
  if (n === 0) return 0;
  if (n === 1) return inclusive(front[0], r);
  if (n === 2) {
    const both = front[0].map((v, i) => Math.max(v, front[1][i]));
    return inclusive(front[0], r) + inclusive(front[1], r) - inclusive(both, r);
  }
  const sorted = front.sort((a, b) => a[0] - b[0]);
  let hv = 0;
  for (let k = 0; k < n; k++) hv += exclusive(sorted[k], sorted.slice(k + 1), r, wfg);
  return hv;
}

/** exclhv: the volume p adds to `others` (all inside r), inclhv(p) − HV(limitset), by `hv`. */
function exclusive(p: Point, others: readonly Point[], r: Point, hv: Measure): number {
  const limited = others.map((q) => q.map((v, i) => Math.max(v, p[i])));
  return inclusive(p, r) - hv(limited, r);
}

/** The fastest exact measure for r's dimension (m ≥ 2). */
const fastest = (r: Point): Measure => (r.length === 2 ? sweep2d : wfg);

/** HV(P; r) for two objectives by the sweep alone (exported so tests compare it with WFG). */
export function hypervolume2d(points: readonly Point[], r: Point): number {
  if (r.length !== 2) throw new InvalidInputError(`hypervolume2d needs 2 objectives, got ${r.length}`);
  return finite(sweep2d(inside(points, r), r), 'the hypervolume');
}

/** HV(P; r) by WFG's recursion alone, for any m ≥ 1 (m = 1: r − min f). */
export function hypervolumeWfg(points: readonly Point[], r: Point): number {
  const pts = inside(points, r);
  if (r.length === 1) return pts.length === 0 ? 0 : finite(r[0] - Math.min(...pts.map((p) => p[0])), 'the hypervolume');
  return finite(wfg(pts, r), 'the hypervolume');
}

/** HV(P; r), exact: the sweep for m = 2, WFG otherwise. */
export function hypervolume(points: readonly Point[], r: Point): number {
  return r.length === 2 ? hypervolume2d(points, r) : hypervolumeWfg(points, r);
}

/**
 * HV(P ∪ {p}) − HV(P): what p would add to P (0 when some point of P dominates or equals it, or p
 * is not strictly better than r). This is the hypervolume improvement of p over the front P.
 */
export function hypervolumeImprovement(p: Point, points: readonly Point[], r: Point): number {
  const pts = inside(points, r);
  if (inside([p], r).length === 0) return 0;
  if (pts.some((q) => dominates(q, p) || q.every((v, i) => v === p[i]))) return 0;
  return Math.max(0, finite(exclusive(p, pts, r, fastest(r)), 'the hypervolume improvement'));
}

/**
 * The exclusive hypervolume of every point of P (in P's order): HV(P) − HV(P \ {p_i}). A dominated
 * point, a duplicate or a point outside r contributes 0. P \ {p_i} keeps every other point, the
 * dominated ones too: a point only p_i dominates comes back into the front without p_i.
 */
export function hypervolumeContributions(points: readonly Point[], r: Point): number[] {
  inside(points, r); // validates
  const inBox = points.map((p) => p.every((v, i) => v < r[i]));
  const out =
    r.length === 2
      ? contributions2d(points, inBox, r)
      : points.map((p, i) => (inBox[i] ? exclusive(p, points.filter((_, j) => j !== i && inBox[j]), r, wfg) : 0));
  return out.map((v) => Math.max(0, finite(v, 'a hypervolume contribution')));
}

/**
 * m = 2 in O(n log n). The front sorted by f_1 has f_2 decreasing; without its k-th point p the
 * staircase changes only inside W_k = [p_1, f_1 of the next) × [p_2, f_2 of the previous) (r closing
 * both ends), where the points p alone dominated come back. So p's contribution is |W_k| minus the
 * sweep of the dominated points that lie in W_k (each lies in one window at most; a copy of p fills it).
 */
function contributions2d(points: readonly Point[], inBox: boolean[], r: Point): number[] {
  const order = points.flatMap((p, i) => (inBox[i] ? [i] : []));
  order.sort((a, b) => points[a][0] - points[b][0] || points[a][1] - points[b][1]);
  const front: number[] = [];
  const behind: number[] = [];
  let best = r[1];
  for (const i of order) {
    if (points[i][1] < best) {
      front.push(i);
      best = points[i][1];
    } else behind.push(i);
  }
  const corner = (k: number): [number, number] => [k + 1 < front.length ? points[front[k + 1]][0] : r[0], k > 0 ? points[front[k - 1]][1] : r[1]];
  const windows = front.map(() => [] as Point[]);
  for (const i of behind) {
    // The last front point with f_1 ≤ q_1 weakly dominates q: only its window can hold q (a q above the
    // window's upper edge adds nothing to the window's sweep).
    let lo = 0;
    let hi = front.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (points[front[mid]][0] <= points[i][0]) lo = mid;
      else hi = mid - 1;
    }
    windows[lo].push(points[i]);
  }
  const out = new Array<number>(points.length).fill(0);
  front.forEach((i, k) => {
    const c = corner(k);
    out[i] = inclusive(points[i], c) - sweep2d(windows[k], c);
  });
  return out;
}

/** The derived reference point (BoTorch's rule, see the header) of a non-empty set of points. */
export function deriveReferencePoint(points: readonly Point[], scale = 0.1): number[] {
  const m = checkPoints(points);
  if (m === 0) throw new InvalidInputError('a reference point needs at least one point');
  if (!(scale >= 0 && Number.isFinite(scale))) throw new InvalidInputError(`scale must be finite and ≥ 0, got ${scale}`);
  const front = nonDominated(points).map((j) => points[j]);
  if (front.length === 1) return front[0].map((v) => finite(v + scale * Math.max(Math.abs(v), MIN_RANGE), 'the reference point'));
  return Array.from({ length: m }, (_, i) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (const p of front) {
      lo = Math.min(lo, p[i]);
      hi = Math.max(hi, p[i]);
    }
    return finite(hi + scale * Math.max(hi - lo, MIN_RANGE), 'the reference point');
  });
}
