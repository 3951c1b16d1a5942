/**
 * Limited-memory BFGS minimiser (Nocedal & Wright, "Numerical Optimization", 2nd ed., Alg. 7.4/7.5).
 *
 * Glossary: p = number of parameters; x (p) the iterate, g (p) its gradient, d (p) the search
 * direction; (s_k, y_k) = (x_{k+1} − x_k, g_{k+1} − g_k) the m most recent curvature pairs.
 *
 * The line search is a weak-Wolfe bracketing/bisection search (Lewis & Overton 2013): it is short,
 * guarantees s_kᵀy_k > 0 whenever it succeeds (so the inverse-Hessian approximation stays positive
 * definite), and treats a non-finite f as "step too long", which is what lets the GP fit probe
 * hyperparameters where the kernel matrix overflows and simply back off.
 *
 * The objective may be given as one function returning (f, ∇f), or split (`SplitObjective`) so the
 * gradient is computed only where the algorithm reads it: at the start and at line-search points
 * that pass the sufficient-decrease test. A point that fails it only needs f. Both forms take the
 * same steps; the split form saves the gradient's cost (for the GP fit, K⁻¹) at rejected steps.
 */

export interface ObjectiveValue {
  f: number;
  grad: Float64Array;
}

/** The function to minimise: returns f(x) and ∇f(x). It may return a non-finite f. */
export type Objective = (x: Float64Array) => ObjectiveValue;

/** The function to minimise as f(x) (may be non-finite) and ∇f at the x of the last `value` call. */
export interface SplitObjective {
  value(x: Float64Array): number;
  gradient(): Float64Array;
}

function split(fn: Objective | SplitObjective): SplitObjective {
  if (typeof fn !== 'function') return fn;
  let last: Float64Array = new Float64Array(0);
  return {
    value(x) {
      const v = fn(x);
      last = v.grad;
      return v.f;
    },
    gradient: () => last,
  };
}

export interface LbfgsOptions {
  /** Number of stored curvature pairs m (default 10). */
  memory?: number;
  /** Iteration cap (default 200). */
  maxIterations?: number;
  /** Stop when ‖g‖∞ ≤ gradTol (default 1e-6). */
  gradTol?: number;
  /** Stop when |f_k − f_{k+1}| ≤ fTol·max(|f_k|, |f_{k+1}|, 1) (default 1e-10). */
  fTol?: number;
  /** Trial steps per line search (default 40). */
  maxLineSearch?: number;
  /** Sufficient-decrease (Armijo) constant c1 (default 1e-4). */
  c1?: number;
  /** Curvature (weak Wolfe) constant c2 (default 0.9, the usual quasi-Newton choice). */
  c2?: number;
}

export type LbfgsReason = 'gradient' | 'f_change' | 'max_iterations' | 'line_search_failed' | 'non_finite_start';

export interface LbfgsResult {
  x: Float64Array;
  f: number;
  grad: Float64Array;
  iterations: number;
  evaluations: number;
  converged: boolean;
  reason: LbfgsReason;
}

function dotp(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function normInf(a: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}

function allFinite(a: Float64Array): boolean {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) return false;
  return true;
}

/** Two-loop recursion: d = −H_k g with H_k⁰ = γ I, γ = s_{k−1}ᵀy_{k−1} / y_{k−1}ᵀy_{k−1} (N&W eq. 7.20). */
function direction(g: Float64Array, S: Float64Array[], Y: Float64Array[], rho: number[]): Float64Array {
  const q = Float64Array.from(g);
  const m = S.length;
  const a = new Array<number>(m);
  for (let i = m - 1; i >= 0; i--) {
    a[i] = rho[i] * dotp(S[i], q);
    for (let j = 0; j < q.length; j++) q[j] -= a[i] * Y[i][j];
  }
  if (m > 0) {
    const gamma = dotp(S[m - 1], Y[m - 1]) / dotp(Y[m - 1], Y[m - 1]);
    for (let j = 0; j < q.length; j++) q[j] *= gamma;
  }
  for (let i = 0; i < m; i++) {
    const b = rho[i] * dotp(Y[i], q);
    for (let j = 0; j < q.length; j++) q[j] += S[i][j] * (a[i] - b);
  }
  for (let j = 0; j < q.length; j++) q[j] = -q[j];
  return q;
}

interface Point {
  x: Float64Array;
  f: number;
  grad: Float64Array;
}

function step(x: Float64Array, d: Float64Array, t: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i] + t * d[i];
  return out;
}

/**
 * Weak-Wolfe line search by bracketing: halve after a failed Armijo test (or a non-finite f),
 * double after a failed curvature test, bisect once bracketed. Returns the accepted point, or the
 * best Armijo point seen when the curvature condition could not be met, or null.
 */
function lineSearch(fn: SplitObjective, cur: Point, d: Float64Array, t0: number, o: Required<LbfgsOptions>, count: () => void): Point | null {
  const slope = dotp(cur.grad, d);
  let lo = 0, hi = Infinity, t = t0;
  let armijoOnly: Point | null = null;
  for (let k = 0; k < o.maxLineSearch; k++) {
    const x = step(cur.x, d, t);
    const f = fn.value(x);
    count();
    // A non-finite f or gradient counts as "too long"; the gradient is needed only past Armijo.
    const grad = Number.isFinite(f) && !(f > cur.f + o.c1 * t * slope) ? fn.gradient() : null;
    if (!grad || !allFinite(grad)) {
      hi = t;
    } else if (dotp(grad, d) < o.c2 * slope) {
      armijoOnly = { x, f, grad };
      lo = t;
    } else {
      return { x, f, grad };
    }
    t = hi < Infinity ? 0.5 * (lo + hi) : 2 * lo;
  }
  return armijoOnly;
}

const DEFAULTS: Required<LbfgsOptions> = {
  memory: 10,
  maxIterations: 200,
  gradTol: 1e-6,
  fTol: 1e-10,
  maxLineSearch: 40,
  c1: 1e-4,
  c2: 0.9,
};

export function minimizeLbfgs(objective: Objective | SplitObjective, x0: ArrayLike<number>, options: LbfgsOptions = {}): LbfgsResult {
  const o = { ...DEFAULTS, ...options };
  const fn = split(objective);
  let evaluations = 1;
  const f0 = fn.value(Float64Array.from(x0));
  let cur: Point = { x: Float64Array.from(x0), f: f0, grad: fn.gradient() };
  const done = (iterations: number, converged: boolean, reason: LbfgsReason): LbfgsResult => ({ ...cur, iterations, evaluations, converged, reason });
  if (!Number.isFinite(cur.f) || !allFinite(cur.grad)) return done(0, false, 'non_finite_start');
  const S: Float64Array[] = [], Y: Float64Array[] = [], rho: number[] = [];
  for (let it = 0; it < o.maxIterations; it++) {
    if (normInf(cur.grad) <= o.gradTol) return done(it, true, 'gradient');
    let d = direction(cur.grad, S, Y, rho);
    if (!(dotp(d, cur.grad) < 0)) {
      // Lost descent (rounding in the memory): restart from steepest descent.
      S.length = Y.length = rho.length = 0;
      d = direction(cur.grad, S, Y, rho);
    }
    // First step of a fresh memory: unit-length move, since −g has no natural scale.
    const t0 = S.length === 0 ? Math.min(1, 1 / Math.sqrt(dotp(d, d))) : 1;
    const next = lineSearch(fn, cur, d, t0, o, () => evaluations++);
    if (!next) return done(it, false, 'line_search_failed');
    const s = step(next.x, cur.x, -1);
    const y = step(next.grad, cur.grad, -1);
    const sy = dotp(s, y);
    if (sy > 1e-12 * Math.sqrt(dotp(s, s) * dotp(y, y))) {
      S.push(s); Y.push(y); rho.push(1 / sy);
      if (S.length > o.memory) { S.shift(); Y.shift(); rho.shift(); }
    }
    const prevF = cur.f;
    cur = next;
    if (Math.abs(prevF - cur.f) <= o.fTol * Math.max(Math.abs(prevF), Math.abs(cur.f), 1)) return done(it + 1, true, 'f_change');
  }
  return done(o.maxIterations, normInf(cur.grad) <= o.gradTol, 'max_iterations');
}
