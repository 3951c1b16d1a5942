/**
 * Pareto dominance, non-dominated sorting, crowding distance and constraint-domination, for
 * MINIMISATION of every objective.
 *
 * The engine knows no directions: a caller with objectives to maximise negates them before calling
 * (which objective is better is decided once, in the domain's results, ARCHITECTURE.md rule 13).
 *
 * Glossary: m = number of objectives; a point F = (f_1, …, f_m) (number[] of length m); n = number
 * of points; a front is an array of indices into the points; c = (c_1, …, c_k) a point's constraint
 * values, feasible when every c_j ≤ 0 (Optuna's `constraints_func` convention); the total violation
 * is CV = Σ_j max(0, c_j).
 *
 * ALGORITHM.md §32.1 says how the service is to use them.
 *
 * References: K. Deb, A. Pratap, S. Agarwal, T. Meyarivan, "A fast and elitist multiobjective
 * genetic algorithm: NSGA-II", IEEE TEC 6(2), 2002 (fast non-dominated sort, Sec. III-A; crowding
 * distance, Sec. III-B); K. Deb, "An efficient constraint handling method for genetic algorithms",
 * CMAME 186, 2000 (feasibility first), which NSGA-II's paper states as constrained-domination.
 */
import { InvalidInputError } from '../errors.js';

export type Point = readonly number[];

/** Throws unless every point is a finite vector of the same length m ≥ 1; returns m (0 for no points). */
export function checkPoints(points: readonly Point[], what = 'objective values'): number {
  if (points.length === 0) return 0;
  const m = points[0].length;
  if (m < 1) throw new InvalidInputError(`${what}: a point needs at least one value`);
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (p.length !== m) throw new InvalidInputError(`${what}: point ${i} has ${p.length} values, expected ${m}`);
    for (const v of p) if (!Number.isFinite(v)) throw new InvalidInputError(`${what}: point ${i} has a non-finite value ${v}`);
  }
  return m;
}

/** a ≺ b: a is no worse than b in every objective and better in at least one. */
export function dominates(a: Point, b: Point): boolean {
  let better = false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] > b[i]) return false;
    if (a[i] < b[i]) better = true;
  }
  return better;
}

/** A strict partial order on indices: does point i dominate point j? */
export type DominanceTest = (i: number, j: number) => boolean;

/**
 * Deb et al. (2002)'s fast non-dominated sort, O(m n²), for any strict partial order `dom` on the
 * indices 0…n−1: fronts F_1, F_2, … where F_1 holds the points no point dominates and F_{k+1} the
 * points dominated only by points of F_1 … F_k. Within a front, indices ascend.
 */
export function sortByDominance(n: number, dom: DominanceTest): number[][] {
  const dominatedBy = Array.from({ length: n }, () => [] as number[]); // S_p: the points p dominates
  const count = new Array<number>(n).fill(0); // n_p: how many points dominate p
  for (let p = 0; p < n; p++) {
    for (let q = p + 1; q < n; q++) {
      if (dom(p, q)) {
        dominatedBy[p].push(q);
        count[q]++;
      } else if (dom(q, p)) {
        dominatedBy[q].push(p);
        count[p]++;
      }
    }
  }
  const fronts: number[][] = [];
  let current: number[] = [];
  for (let p = 0; p < n; p++) if (count[p] === 0) current.push(p);
  while (current.length > 0) {
    fronts.push(current);
    const next: number[] = [];
    for (const p of current) {
      for (const q of dominatedBy[p]) if (--count[q] === 0) next.push(q);
    }
    current = next.sort((a, b) => a - b);
  }
  return fronts;
}

/** The fronts of the points under Pareto dominance (minimisation). */
export function nonDominatedSort(points: readonly Point[]): number[][] {
  checkPoints(points);
  return sortByDominance(points.length, (i, j) => dominates(points[i], points[j]));
}

/**
 * The indices of the non-dominated points (the first front), ascending. Equal points do not dominate
 * one another, so duplicates of a front point are all kept. O(m n²) in the worst case, O(m n·|front|)
 * as written: a point is compared only with the current candidates.
 */
export function nonDominated(points: readonly Point[]): number[] {
  checkPoints(points);
  const front: number[] = [];
  for (let i = 0; i < points.length; i++) {
    let dominated = false;
    for (let k = front.length - 1; k >= 0; k--) {
      const j = front[k];
      if (dominates(points[j], points[i])) {
        dominated = true;
        break;
      }
      if (dominates(points[i], points[j])) front.splice(k, 1);
    }
    if (!dominated) front.push(i);
  }
  return front.sort((a, b) => a - b);
}

/**
 * Crowding distance of each point of one front (Deb et al. 2002, Sec. III-B): for every objective, the
 * front sorted by it gives its two boundary points +∞ and every other point the gap between its two
 * neighbours divided by the objective's range f_max − f_min; the distances add over objectives. An
 * objective whose values are all equal contributes nothing (there is no range to divide by; Optuna's
 * `_calc_crowding_distance` does the same). Returned in the order of `front`.
 */
export function crowdingDistance(points: readonly Point[], front: readonly number[]): number[] {
  const n = front.length;
  for (const j of front) if (!(Number.isInteger(j) && j >= 0 && j < points.length)) throw new InvalidInputError(`front index ${j} is not a point`);
  const out = new Array<number>(n).fill(0);
  if (n === 0) return out;
  const m = points[front[0]].length;
  const order = Array.from({ length: n }, (_, k) => k);
  for (let i = 0; i < m; i++) {
    const v = (k: number): number => points[front[k]][i];
    order.sort((a, b) => v(a) - v(b) || a - b);
    const range = v(order[n - 1]) - v(order[0]);
    if (!(range > 0)) continue;
    out[order[0]] = Infinity;
    out[order[n - 1]] = Infinity;
    for (let k = 1; k < n - 1; k++) out[order[k]] += (v(order[k + 1]) - v(order[k - 1])) / range;
  }
  return out;
}

/** CV = Σ_j max(0, c_j): zero exactly when the point is feasible. */
export function totalViolation(c: Point): number {
  let s = 0;
  for (const v of c) {
    if (Number.isNaN(v)) throw new InvalidInputError('a constraint value is NaN');
    if (v > 0) s += v;
  }
  return s;
}

/** Feasible when every constraint value is ≤ 0 (no constraints: feasible). */
export function isFeasible(c: Point): boolean {
  return totalViolation(c) === 0;
}

/**
 * Deb's constraint-domination of a (objectives fa, constraints ca) over b: a feasible point beats an
 * infeasible one; of two infeasible points the smaller total violation wins; of two feasible points
 * Pareto dominance decides.
 */
export function constrainedDominates(fa: Point, ca: Point, fb: Point, cb: Point): boolean {
  const va = totalViolation(ca);
  const vb = totalViolation(cb);
  if (va === 0 && vb === 0) return dominates(fa, fb);
  return va < vb;
}

/**
 * Fronts under constraint-domination: the feasible points sorted by Pareto dominance first, then
 * the infeasible ones, one front per distinct violation, smallest first. `constraints[i]` are point
 * i's constraint values (all points the same count k; k = 0 reduces to `nonDominatedSort`).
 */
export function constrainedNonDominatedSort(points: readonly Point[], constraints: readonly Point[]): number[][] {
  checkPoints(points);
  if (constraints.length !== points.length) {
    throw new InvalidInputError(`${points.length} points but ${constraints.length} constraint vectors`);
  }
  const k = constraints[0]?.length ?? 0;
  for (let i = 0; i < constraints.length; i++) {
    if (constraints[i].length !== k) throw new InvalidInputError(`point ${i} has ${constraints[i].length} constraint values, expected ${k}`);
  }
  const cv = constraints.map(totalViolation);
  return sortByDominance(points.length, (i, j) => (cv[i] === 0 && cv[j] === 0 ? dominates(points[i], points[j]) : cv[i] < cv[j]));
}

/** The indices of the feasible points that no feasible point dominates (the constrained front). */
export function feasibleNonDominated(points: readonly Point[], constraints: readonly Point[]): number[] {
  if (constraints.length !== points.length) {
    throw new InvalidInputError(`${points.length} points but ${constraints.length} constraint vectors`);
  }
  const feasible = points.flatMap((_, i) => (isFeasible(constraints[i]) ? [i] : []));
  return nonDominated(feasible.map((i) => points[i])).map((k) => feasible[k]);
}
