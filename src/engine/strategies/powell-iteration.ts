/**
 * Powell's small-budget iteration on the least-Frobenius-norm model (powell-model.ts): the start phase of
 * the ProbNES methods (probnes-start.ts; docs/ALGORITHM.md §29). NEWUOA's and BOBYQA's rules (Powell 2006,
 * 2009), in the caller's coordinates, on a plain-JSON state that the functions here change in place (the
 * strategy clones it first: its inputs are never mutated).
 *
 * One step: the model's trust-region minimiser around the best point x_opt within Δ is evaluated; the ratio
 * r = (f_opt − f_new)/(Q(x_opt) − Q(x_new)) sets Δ ← min(Δ/2, ‖s‖) for r ≤ 0.1, max(Δ/2, ‖s‖) for r ≤ 0.7,
 * max(Δ/2, 2‖s‖) otherwise, and Δ ← ρ when Δ ≤ 1.5ρ (BOBYQA, Powell 2009, §6). A failed step (r ≤ 0.1), or
 * a step shorter than ρ/2 (not evaluated; Δ ← max(Δ/2, ρ)), leads to a model-improvement step when a
 * point lies farther than max(2Δ, 10ρ) from x_opt: that point is replaced by the maximiser of the modulus
 * of its Lagrange function within Δ of x_opt (Powell 2009, §3); a short step skips that check when the
 * model's last three errors |f − Q| at trust points are all below ρ²·λ_min(∇²Q)/8 (the model is accurate
 * at this ρ). Otherwise ρ shrinks (after a failed step only when r ≤ 0 and max(Δ, ‖s‖) ≤ ρ; ρ/10, or
 * √(ρ·ρ_end) near the end, or ρ_end: Powell 2006, §7) and Δ ← max(ρ_old/2, ρ). Two reductions asked at
 * ρ = ρ_end end the iteration (`converged`).
 *
 * Every evaluated point enters the interpolation set, whoever asked for it (the model's own point, a
 * point another worker evaluated, a late result): the point it replaces maximises
 * |σ_k|·max(1, (‖x_k − x_opt‖/r)²)³, σ_k the ratio of the new to the old KKT determinant (Powell's
 * denominator, which keeps the system well poised), r = max(0.1Δ, ρ) (NEWUOA's choice of KNEW).
 */
import { LuDecomposition } from 'ml-matrix';
import { fromRows, symEig } from '../linalg/index.js';
import { samePoint } from './es-utils.js';
import { geometryStep, kktMatrix, lagrangeFunction, leastFrobeniusQuadratic, quadValue, trustStepBox, type Box, type Quadratic } from './powell-model.js';

export interface PowellPoint {
  x: number[];
  y: number;
}

/** The point handed out and what the model predicted for it (the ratio test reads it when its value comes). */
export interface PowellPending {
  x: number[];
  kind: 'trust' | 'geometry';
  /** geometry: the index of the point it replaces. */
  knew: number;
  fOpt: number;
  predicted: number;
  stepNorm: number;
}

export interface PowellState {
  d: number;
  /** Interpolation points kept (Powell's NPT): 2d + 1 up to (d + 1)(d + 2)/2, the full quadratic's. */
  m: number;
  points: PowellPoint[];
  model: Quadratic | null;
  /** Δ, the trust radius; ρ, its lower bound (Powell's RHO), down to ρ_end (RHOEND); Δ's cap (the box is finite). */
  delta: number;
  rho: number;
  rhoEnd: number;
  deltaMax: number;
  pending: PowellPending | null;
  /** Index of a point to replace by a geometry step next, or −1. */
  improve: number;
  /** |f − Q| at the last three trust points (BOBYQA's DIFFA, DIFFB, DIFFC). */
  errors: number[];
  floorFails: number;
  converged: boolean;
  /**
   * 'newuoa': a point is far (a geometry step's candidate) beyond 2Δ of x_opt (Powell 2006, §6); absent:
   * beyond max(2Δ, 10ρ) (BOBYQA, Powell 2009), which iterations written before the choice existed keep.
   */
  far?: 'newuoa';
  /** Counts for the record: trust steps, geometry steps, ρ reductions, successful steps (r > 0.1). */
  stats: { trust: number; geometry: number; rhoCuts: number; success: number };
}

const dist = (a: readonly number[], b: readonly number[]) => Math.hypot(...a.map((v, i) => v - b[i]));

/**
 * A fresh iteration: `m` interpolation points (Powell's NPT, 2d + 1 … (d + 1)(d + 2)/2), Δ₀ = ρ₀ = `delta0`
 * (Powell's RHOBEG, the stencil's spacing), ρ_end = `rhoEnd`.
 */
export function initPowell(d: number, delta0 = 1, rhoEnd = 1e-7, deltaMax = 10, m = 2 * d + 1, far: 'newuoa' | 'bobyqa' = 'newuoa'): PowellState {
  return {
    d, m, points: [], model: null, delta: delta0, rho: delta0, rhoEnd, deltaMax,
    pending: null, improve: -1, errors: [], floorFails: 0, converged: false, ...(far === 'newuoa' ? { far } : {}),
    stats: { trust: 0, geometry: 0, rhoCuts: 0, success: 0 },
  };
}

/**
 * Powell's 2d + 1 design around x₀: x₀ and x₀ ± Δe_i. Inside a box: a side with less than Δ of room
 * moves the pair to the other side (x₀ + Δe_i and x₀ + 2Δe_i, as BOBYQA does when x₀ is on a bound), and
 * the offsets shrink to the room there is, so that the 2d + 1 points stay distinct and poised.
 */
export function powellStencil(x0: readonly number[], delta: number, box: Box | null = null): number[][] {
  const pts = [x0.slice()];
  x0.forEach((v, i) => {
    const up = box ? box.upper[i] - v : Infinity, down = box ? v - box.lower[i] : Infinity;
    let a = delta, b = -delta;
    if (down < delta && up >= delta) [a, b] = [Math.min(delta, up / 2), Math.min(2 * delta, up)];
    else if (up < delta && down >= delta) [a, b] = [-Math.min(delta, down / 2), -Math.min(2 * delta, down)];
    else if (up < delta && down < delta) [a, b] = [up, -down];
    pts.push(x0.map((w, k) => (k === i ? w + a : w)), x0.map((w, k) => (k === i ? w + b : w)));
  });
  return pts;
}

export function bestPoint(s: PowellState): PowellPoint {
  return s.points.reduce((b, p) => (p.y < b.y ? p : b), s.points[0]);
}

/**
 * Which point x enters in place of: NEWUOA's KNEW, the old point (never x_opt) maximising
 * |σ_k|·max(1, (‖x_k − x_opt‖²/r²))³ with σ_k = det K(new set)/det K(old set), r = max(0.1Δ, ρ).
 */
export function replacementIndex(s: PowellState, x: readonly number[], opt: readonly number[]): number {
  const xs = s.points.map((p) => p.x);
  const ys = (pts: number[][]) => pts.map((p) => p.map((v, i) => v - opt[i]));
  const det0 = new LuDecomposition(kktMatrix(ys(xs))).determinant;
  const r2 = Math.max(0.1 * s.delta, s.rho) ** 2;
  let best = -1, score = -Infinity;
  s.points.forEach((p, k) => {
    if (p.x.every((v, i) => v === opt[i])) return;
    const swapped = xs.map((q, j) => (j === k ? x.slice() : q));
    const det = new LuDecomposition(kktMatrix(ys(swapped))).determinant;
    const sigma = det0 !== 0 && Number.isFinite(det0) ? Math.abs(det / det0) : Math.abs(det);
    const sc = sigma * Math.max(1, dist(p.x, opt) ** 2 / r2) ** 3;
    if (sc > score) [best, score] = [k, sc];
  });
  return best;
}

/** Refit the model after the set changed: the least change of the previous Hessian (H_prev = 0 at first). */
function refit(s: PowellState): void {
  if (s.points.length < s.d + 1) return;
  const opt = bestPoint(s).x;
  const q = leastFrobeniusQuadratic(s.points.map((p) => p.x), s.points.map((p) => p.y), opt, s.model?.H ?? null);
  // A singular set (possible only when a point lands on the others' affine hull) keeps the last model
  // until a later point restores the poise.
  if (q) s.model = q;
}

/** Add an evaluated point to the set, replacing `knew` (a geometry step's) or KNEW once the set is full. */
function addPoint(s: PowellState, p: PowellPoint, knew = -1): void {
  // A point the set already holds (a repeat) adds nothing and would make the KKT system singular.
  if (s.points.some((q) => q.x.every((v, i) => v === p.x[i]))) return;
  if (s.points.length < s.m) s.points.push(p);
  else {
    const optBefore = bestPoint(s);
    const opt = p.y < optBefore.y ? p.x : optBefore.x;
    const k = knew >= 0 && s.points[knew] && s.points[knew] !== optBefore ? knew : replacementIndex(s, p.x, opt);
    if (k >= 0) s.points[k] = p;
  }
  refit(s);
}

/**
 * The farthest point of the set from x_opt when it lies beyond 2Δ (NEWUOA) or max(2Δ, 10ρ) (BOBYQA) (a
 * geometry step's candidate), else −1. NEWUOA's bound keeps ρ from falling while the set still holds points
 * farther than 2Δ: on a function of plateaus (BBOB's step ellipsoid) BOBYQA's lets ρ fall within a plateau
 * after a few failed steps, and the iteration stalls there (docs/ALGORITHM.md §29).
 */
function farPoint(s: PowellState): number {
  const opt = bestPoint(s).x;
  let k = -1, far = s.far === 'newuoa' ? 2 * s.delta : Math.max(2 * s.delta, 10 * s.rho);
  s.points.forEach((p, j) => {
    const r = dist(p.x, opt);
    if (r > far) [k, far] = [j, r];
  });
  return k;
}

/** ρ's reduction (NEWUOA: ρ/10, √(ρ·ρ_end) between 16 and 250 ρ_end, ρ_end below); at ρ_end it counts a failure. */
function reduceRho(s: PowellState): void {
  if (s.rho <= s.rhoEnd) {
    s.floorFails++;
    if (s.floorFails >= 2) s.converged = true;
    return;
  }
  const ratio = s.rho / s.rhoEnd;
  const next = ratio <= 16 ? s.rhoEnd : ratio <= 250 ? Math.sqrt(s.rho * s.rhoEnd) : 0.1 * s.rho;
  s.delta = Math.max(0.5 * s.rho, next);
  s.rho = next;
  s.stats.rhoCuts++;
}

/** x projected onto the box (a geometry step may leave it). */
function project(x: number[], box: Box | null): number[] {
  return box ? x.map((v, i) => Math.min(box.upper[i], Math.max(box.lower[i], v))) : x;
}

/**
 * The model's next point (a trust-region or a geometry step), recorded as pending; null once converged
 * or while the set does not determine a model.
 */
export function powellNext(s: PowellState, box: Box | null): number[] | null {
  for (let tries = 0; tries < 20 && !s.converged; tries++) {
    if (!s.model) return null;
    const opt = bestPoint(s);
    if (s.improve >= 0 && s.points[s.improve] && s.points[s.improve] !== opt) {
      const k = s.improve;
      s.improve = -1;
      const l = lagrangeFunction(s.points.map((p) => p.x), opt.x, k);
      if (l) {
        const step = geometryStep(l, opt.x, s.delta);
        const x = project(opt.x.map((v, i) => v + step[i]), box);
        if (dist(x, opt.x) > 0) {
          s.pending = { x, kind: 'geometry', knew: k, fOpt: opt.y, predicted: 0, stepNorm: dist(x, opt.x) };
          s.stats.geometry++;
          return x;
        }
      }
    }
    const step = trustStepBox(s.model, opt.x, s.delta, box);
    const x = project(opt.x.map((v, i) => v + step[i]), box);
    const sn = dist(x, opt.x);
    const predicted = quadValue(s.model, opt.x) - quadValue(s.model, x);
    if (sn >= 0.5 * s.rho && predicted > 0) {
      s.pending = { x, kind: 'trust', knew: -1, fOpt: opt.y, predicted, stepNorm: sn };
      s.stats.trust++;
      return x;
    }
    // A short step: the model's minimiser is within ρ/2 of x_opt (or it predicts no decrease).
    s.delta = Math.max(0.5 * s.delta, s.rho);
    const curvature = Math.max(symEig(fromRows(s.model.H)).values[0], 0);
    const accurate = s.errors.length === 3 && Math.max(...s.errors) < 0.125 * curvature * s.rho * s.rho;
    const far = accurate ? -1 : farPoint(s);
    if (far >= 0) s.improve = far;
    else reduceRho(s);
  }
  return null;
}

/** An evaluated point: the pending one (ratio test, radius rule) or another (it joins the set). */
export function powellObserve(s: PowellState, x: readonly number[], y: number): void {
  const pend = s.pending;
  const isPending = pend !== null && samePoint(pend.x, x);
  if (!isPending || !pend) {
    addPoint(s, { x: x.slice(), y });
    return;
  }
  s.pending = null;
  if (pend.kind === 'geometry') {
    addPoint(s, { x: x.slice(), y }, pend.knew);
    return;
  }
  const ratio = (pend.fOpt - y) / pend.predicted;
  const sn = pend.stepNorm;
  if (ratio <= 0.1) s.delta = Math.min(0.5 * s.delta, sn);
  else if (ratio <= 0.7) s.delta = Math.max(0.5 * s.delta, sn);
  else s.delta = Math.max(0.5 * s.delta, 2 * sn);
  s.delta = Math.min(s.delta, s.deltaMax);
  if (s.delta <= 1.5 * s.rho) s.delta = s.rho;
  if (ratio > 0.1) s.stats.success++;
  if (s.model) s.errors = [...s.errors, Math.abs(y - quadValue(s.model, x))].slice(-3);
  addPoint(s, { x: x.slice(), y });
  if (ratio <= 0.1) {
    const far = farPoint(s);
    if (far >= 0) s.improve = far;
    else if (ratio <= 0 && Math.max(s.delta, sn) <= s.rho) reduceRho(s);
  } else s.floorFails = 0;
}
