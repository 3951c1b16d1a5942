/**
 * Powell's small-budget machinery, prototyped outside the engine for bench/lib/bbob-proto.ts (flags `mfn`,
 * `solo`, `handoff`): an underdetermined quadratic model that interpolates m = 2d + 1 points and, among all
 * quadratics that do, changes its Hessian least in Frobenius norm (Powell 2004, "Least Frobenius norm
 * updating of quadratic models that satisfy interpolation conditions", Math. Program. 100; NEWUOA, Powell
 * 2006; BOBYQA, Powell 2009), its trust-region step, and Powell's radius rule. Everything here works in
 * the caller's coordinates (bbob-proto.ts passes coordinates whitened by the prior, so Δ is in prior
 * standard deviations) and knows nothing of the engine.
 *
 * The model Q(x) = c + gᵀy + ½ yᵀHy, y = x − centre, solves
 *   min ¼‖H − H_prev‖_F²  subject to  Q(x_j) = f_j, j = 1..m.
 * Its Lagrangian gives H = H_prev + Σ_j λ_j y_j y_jᵀ with Σ_j λ_j = 0 and Σ_j λ_j y_j = 0, so (λ, c, g) solve
 * the dense (m + d + 1) KKT system
 *   [ A   E ] [ λ     ]   [ f − ½ yᵀH_prev y ]        A_jk = ½ (y_jᵀ y_k)²,
 *   [ Eᵀ  0 ] [ (c,g) ] = [ 0               ],       E_j = (1, y_jᵀ)
 * (Powell 2004, eqs. 2.4–2.7; NEWUOA keeps its inverse updated, here it is solved afresh: m ≤ 11 at d = 5).
 * With H_prev = 0 and the stencil x₀, x₀ ± Δe_i, the solution is NEWUOA's first model, whose Hessian is
 * diagonal with the central differences (f(x₀ + Δe_i) − 2f(x₀) + f(x₀ − Δe_i))/Δ² (Powell 2006, §2): exact on
 * separable quadratics.
 *
 * The iteration (BOBYQA's, simplified): the model's trust-region minimiser around the best point x_opt
 * within Δ is evaluated; ratio r = (f_opt − f_new)/(Q(x_opt) − Q(x_new)) sets Δ ← min(Δ/2, ‖s‖) for r ≤ 0.1,
 * max(Δ/2, ‖s‖) for r ≤ 0.7, max(Δ/2, 2‖s‖) otherwise, and Δ ← ρ when Δ ≤ 1.5ρ (BOBYQA, Powell 2009, §6).
 * A failed step (r ≤ 0.1), or a step shorter than ρ/2 (not evaluated; Δ ← max(Δ/2, ρ)), leads (with
 * geometry steps on) to a model-improvement step when a point lies farther than max(2Δ, 10ρ) from x_opt: that
 * point is replaced by the maximiser of the modulus of its Lagrange function within Δ of x_opt (Powell 2009,
 * §3 and its code's labels 650–680); a short step skips that check when the model's last three errors
 * |f − Q| at trust points are all below ρ²·λ_min(∇²Q)/8 (the model is accurate at this ρ). Otherwise ρ shrinks
 * (after a failed step only when r ≤ 0 and max(Δ, ‖s‖) ≤ ρ; ρ/10, or √(ρ·ρ_end) near the end, or ρ_end:
 * Powell 2006, §7) and Δ ← max(ρ_old/2, ρ). Two reductions asked at ρ = ρ_end end the phase (`converged`). Every evaluated point enters the interpolation set; the point it
 * replaces is x_opt's farthest in Powell's sense: the one maximising |σ_k|·max(1, (‖x_k − x_opt‖/r)²)³, σ_k
 * the ratio of the new to the old KKT determinant (Powell's denominator, which keeps the system well
 * poised), r = max(0.1Δ, ρ) (NEWUOA's choice of KNEW).
 */
import { LuDecomposition, Matrix } from 'ml-matrix';
import { fromRows, symEig } from '../../src/engine/linalg/index.js';
import { trustRegionMaximiser } from '../../src/engine/strategies/probnes-optimum.js';

/** Q(x) = c + gᵀ(x − centre) + ½ (x − centre)ᵀ H (x − centre). */
export interface Quadratic {
  centre: number[];
  c: number;
  g: number[];
  H: number[][];
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, v, i) => s + v * b[i], 0);
const dist = (a: readonly number[], b: readonly number[]) => Math.hypot(...a.map((v, i) => v - b[i]));
const zerosMat = (d: number) => Array.from({ length: d }, () => new Array<number>(d).fill(0));

export function quadValue(q: Quadratic, x: readonly number[]): number {
  const y = x.map((v, i) => v - q.centre[i]);
  return q.c + dot(q.g, y) + 0.5 * dot(y, q.H.map((row) => dot(row, y)));
}

/** The KKT matrix of the least-Frobenius-norm interpolation problem for the offsets y_j = x_j − centre. */
export function kktMatrix(ys: readonly number[][]): Matrix {
  const m = ys.length, d = ys[0].length, n = m + d + 1;
  const K = Matrix.zeros(n, n);
  for (let j = 0; j < m; j++) {
    for (let k = 0; k < m; k++) K.set(j, k, 0.5 * dot(ys[j], ys[k]) ** 2);
    K.set(j, m, 1);
    K.set(m, j, 1);
    for (let i = 0; i < d; i++) {
      K.set(j, m + 1 + i, ys[j][i]);
      K.set(m + 1 + i, j, ys[j][i]);
    }
  }
  return K;
}

/**
 * The quadratic interpolating (xs, fs) whose Hessian is nearest H_prev in Frobenius norm (Powell 2004),
 * written around `centre`; null when the points do not determine it (fewer than d + 1 affinely
 * independent points: the KKT matrix is singular).
 */
export function leastFrobeniusQuadratic(xs: readonly number[][], fs: readonly number[], centre: readonly number[], Hprev: number[][] | null = null): Quadratic | null {
  const m = xs.length, d = centre.length;
  if (m < d + 1) return null;
  const H0 = Hprev ?? zerosMat(d);
  const ys = xs.map((x) => x.map((v, i) => v - centre[i]));
  const K = kktMatrix(ys);
  const lu = new LuDecomposition(K);
  if (lu.isSingular()) return null;
  const rhs = Matrix.zeros(m + d + 1, 1);
  ys.forEach((y, j) => rhs.set(j, 0, fs[j] - 0.5 * dot(y, H0.map((row) => dot(row, y)))));
  const sol = lu.solve(rhs).getColumn(0);
  if (!sol.every(Number.isFinite)) return null;
  const lambda = sol.slice(0, m);
  // Near-singular systems solve to huge multipliers: treat as undetermined.
  const H = H0.map((row, a) => row.map((v, b) => v + ys.reduce((s, y, j) => s + lambda[j] * y[a] * y[b], 0)));
  if (!H.every((row) => row.every(Number.isFinite))) return null;
  return { centre: centre.slice(), c: sol[m], g: sol.slice(m + 1), H };
}

/** The least-Frobenius Lagrange function of point k (1 at x_k, 0 at the others, H_prev = 0). */
export function lagrangeFunction(xs: readonly number[][], centre: readonly number[], k: number): Quadratic | null {
  return leastFrobeniusQuadratic(xs, xs.map((_, j) => (j === k ? 1 : 0)), centre);
}

/** The step s, ‖s‖ ≤ Δ, minimising Q(from + s) (probnes-optimum.ts's exact trust-region solver on −Q). */
export function trustStep(q: Quadratic, from: readonly number[], delta: number): number[] {
  const y = from.map((v, i) => v - q.centre[i]);
  const grad = q.g.map((gi, i) => gi + dot(q.H[i], y));
  // trustRegionMaximiser maximises gᵀs + sᵀHs: −Q(from + s) = const − ∇Qᵀs − ½ sᵀ∇²Q s.
  return trustRegionMaximiser(grad.map((v) => -v), q.H.map((row) => row.map((v) => -0.5 * v)), delta);
}

export interface Box {
  lower: number[];
  upper: number[];
}

/**
 * The step s, ‖s‖ ≤ Δ, from + s in the box, approximately minimising Q: an active-set loop around the exact
 * trust-region solver: coordinates whose step crosses a bound are fixed on it and the subproblem is solved
 * again in the others with the radius left (BOBYQA's TRSBOX fixes bound-reaching coordinates the same way
 * within its truncated conjugate gradients; Powell 2009, §3). Without this, projecting the free step onto
 * the box shortens it wherever x_opt sits on a face, and the radius rule then shrinks Δ on every success.
 */
export function trustStepBox(q: Quadratic, from: readonly number[], delta: number, box: Box | null): number[] {
  if (!box) return trustStep(q, from, delta);
  const d = from.length;
  const s = new Array<number>(d).fill(0);
  const free = new Set(Array.from({ length: d }, (_, i) => i));
  // A coordinate on a bound whose step points out ends fixed there with step 0.
  for (let pass = 0; pass <= d && free.size > 0; pass++) {
    const F = [...free];
    const fixedNorm2 = s.reduce((t, v, i) => (free.has(i) ? t : t + v * v), 0);
    const radius = Math.sqrt(Math.max(delta * delta - fixedNorm2, 0));
    if (radius <= 0) break;
    // Q restricted to the free coordinates at from + s_fixed: gradient g_F + H_F· s_fixed.
    const y = from.map((v, i) => v + (free.has(i) ? 0 : s[i]) - q.centre[i]);
    const grad = F.map((i) => q.g[i] + dot(q.H[i], y));
    const HF = F.map((i) => F.map((j) => q.H[i][j]));
    const sub = trustRegionMaximiser(grad.map((v) => -v), HF.map((row) => row.map((v) => -0.5 * v)), radius);
    let crossed = false;
    F.forEach((i, k) => {
      const x = from[i] + sub[k];
      if (x < box.lower[i] || x > box.upper[i]) {
        s[i] = Math.min(box.upper[i], Math.max(box.lower[i], x)) - from[i];
        free.delete(i);
        crossed = true;
      } else s[i] = sub[k];
    });
    if (!crossed) break;
  }
  return s.map((v, i) => Math.min(box.upper[i], Math.max(box.lower[i], from[i] + v)) - from[i]);
}

/** The step s, ‖s‖ ≤ Δ, maximising |ℓ(from + s)| (the larger of the maximisers of ℓ and −ℓ). */
export function geometryStep(l: Quadratic, from: readonly number[], delta: number): number[] {
  const y = from.map((v, i) => v - l.centre[i]);
  const grad = l.g.map((gi, i) => gi + dot(l.H[i], y));
  const up = trustRegionMaximiser(grad, l.H.map((row) => row.map((v) => 0.5 * v)), delta);
  const down = trustRegionMaximiser(grad.map((v) => -v), l.H.map((row) => row.map((v) => -0.5 * v)), delta);
  const at = (s: number[]) => Math.abs(quadValue(l, from.map((v, i) => v + s[i])));
  return at(up) >= at(down) ? up : down;
}

export interface MfnOptions {
  /** Interpolation points kept (Powell's NPT): 2d + 1 by default. */
  m?: number;
  /** Initial Δ = ρ (Powell's RHOBEG; the stencil's spacing). */
  delta0?: number;
  /** The final ρ (RHOEND). */
  rhoEnd?: number;
  /** Δ's cap (not Powell's: the box is finite). */
  deltaMax?: number;
  /** Model-improvement steps on far points after a failed or short step (BOBYQA's); off when others' points refresh the set. */
  geometry?: boolean;
  /** Bounds on the points (caller's coordinates), or none. */
  box?: Box | null;
}

export interface MfnPoint {
  x: number[];
  y: number;
}

export interface MfnState {
  d: number;
  m: number;
  points: MfnPoint[];
  model: Quadratic | null;
  delta: number;
  rho: number;
  rhoEnd: number;
  deltaMax: number;
  geometry: boolean;
  box: Box | null;
  /** The point handed out and what the model predicted for it. */
  pending: { x: number[]; kind: 'trust' | 'geometry'; knew: number; fOpt: number; predicted: number; stepNorm: number } | null;
  /** Index of a point to replace by a geometry step next, or −1. */
  improve: number;
  /** |f − Q| at the last three trust points (BOBYQA's DIFFA, DIFFB, DIFFC). */
  errors: number[];
  floorFails: number;
  converged: boolean;
  /** Counts for the record: trust steps, geometry steps, ρ reductions, successful steps (r > 0.1). */
  stats: { trust: number; geometry: number; rhoCuts: number; success: number };
}

export function initMfn(d: number, opts: MfnOptions = {}): MfnState {
  const delta0 = opts.delta0 ?? 1;
  return {
    d, m: opts.m ?? 2 * d + 1, points: [], model: null, delta: delta0, rho: delta0, rhoEnd: opts.rhoEnd ?? 1e-7,
    deltaMax: opts.deltaMax ?? 10, geometry: opts.geometry ?? true, box: opts.box ?? null, pending: null, improve: -1, errors: [], floorFails: 0, converged: false,
    stats: { trust: 0, geometry: 0, rhoCuts: 0, success: 0 },
  };
}

/** Powell's 2d + 1 design x₀, x₀ ± Δe_i (caller's coordinates). */
export function mfnStencil(x0: readonly number[], delta: number): number[][] {
  const pts = [x0.slice()];
  x0.forEach((_, i) => {
    pts.push(x0.map((v, k) => (k === i ? v + delta : v)), x0.map((v, k) => (k === i ? v - delta : v)));
  });
  return pts;
}

export function bestPoint(s: MfnState): MfnPoint {
  return s.points.reduce((b, p) => (p.y < b.y ? p : b), s.points[0]);
}

/**
 * Which point x enters in place of: NEWUOA's KNEW, the old point (never x_opt) maximising
 * |σ_k|·max(1, (‖x_k − x_opt‖²/r²))³ with σ_k = det K(new set)/det K(old set), r = max(0.1Δ, ρ).
 */
export function replacementIndex(s: MfnState, x: readonly number[], opt: readonly number[]): number {
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
    const d2 = dist(p.x, opt) ** 2;
    const sc = sigma * Math.max(1, d2 / r2) ** 3;
    if (sc > score) [best, score] = [k, sc];
  });
  return best;
}

/** Refit the model after the set changed: the least change of the previous Hessian (H_prev = 0 at first). */
function refit(s: MfnState): void {
  if (s.points.length < s.d + 1) return;
  const opt = bestPoint(s).x;
  const q = leastFrobeniusQuadratic(s.points.map((p) => p.x), s.points.map((p) => p.y), opt, s.model?.H ?? null);
  // A singular set (no swap kept it poised: only possible when a point lands on others' affine hull) keeps
  // the last model until a later point restores the poise.
  if (q) s.model = q;
}

/** Add an evaluated point to the set (always: Powell's every new point enters), replacing `knew` or KNEW. */
function addPoint(s: MfnState, p: MfnPoint, knew = -1): void {
  if (s.points.length < s.m) s.points.push(p);
  else {
    const optBefore = bestPoint(s);
    const opt = p.y < optBefore.y ? p.x : optBefore.x;
    const k = knew >= 0 && s.points[knew] && s.points[knew] !== optBefore ? knew : replacementIndex(s, p.x, opt);
    if (k >= 0) s.points[k] = p;
  }
  refit(s);
}

/** The farthest point of the set from x_opt when it lies beyond max(2Δ, 10ρ) (a geometry step's candidate), else −1. */
function farPoint(s: MfnState): number {
  const opt = bestPoint(s).x;
  let k = -1, far = Math.max(2 * s.delta, 10 * s.rho);
  s.points.forEach((p, j) => {
    const r = dist(p.x, opt);
    if (r > far) [k, far] = [j, r];
  });
  return k;
}

/** ρ's reduction (NEWUOA: ρ/10, √(ρ·ρ_end) between 16 and 250 ρ_end, ρ_end below); at ρ_end it counts a failure. */
function reduceRho(s: MfnState): void {
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

/**
 * The next point to evaluate (caller's coordinates), recorded as pending; null once converged or while the
 * set does not determine a model. `box` (optional) clips the step: points are projected onto it.
 */
export function mfnNext(s: MfnState, project: (x: number[]) => number[] = (x) => x): number[] | null {
  for (let tries = 0; tries < 20 && !s.converged; tries++) {
    if (!s.model) return null;
    const opt = bestPoint(s);
    if (s.geometry && s.improve >= 0 && s.points[s.improve] && s.points[s.improve] !== opt) {
      const k = s.improve;
      s.improve = -1;
      const l = lagrangeFunction(s.points.map((p) => p.x), opt.x, k);
      if (l) {
        const x = project(opt.x.map((v, i) => v + geometryStep(l, opt.x, s.delta)[i]));
        if (dist(x, opt.x) > 0) {
          s.pending = { x, kind: 'geometry', knew: k, fOpt: opt.y, predicted: 0, stepNorm: dist(x, opt.x) };
          s.stats.geometry++;
          return x;
        }
      }
    }
    const step = trustStepBox(s.model, opt.x, s.delta, s.box);
    const x = project(opt.x.map((v, i) => v + step[i]));
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
    const far = s.geometry && !accurate ? farPoint(s) : -1;
    if (far >= 0) s.improve = far;
    else reduceRho(s);
  }
  return null;
}

/** An evaluated point: the pending one (ratio test, radius rule) or another (it joins the set). */
export function mfnObserve(s: MfnState, x: readonly number[], y: number): void {
  const pend = s.pending;
  const isPending = pend !== null && pend.x.every((v, i) => Math.abs(v - x[i]) <= 1e-9 * (1 + Math.abs(v)));
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
    const far = s.geometry ? farPoint(s) : -1;
    if (far >= 0) s.improve = far;
    else if (ratio <= 0 && Math.max(s.delta, sn) <= s.rho) reduceRho(s);
  } else s.floorFails = 0;
}
