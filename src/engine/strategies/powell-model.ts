/**
 * Powell's least-Frobenius-norm quadratic model (Powell 2004, "Least Frobenius norm updating of quadratic
 * models that satisfy interpolation conditions", Math. Program. 100; NEWUOA, Powell 2006; BOBYQA, Powell
 * 2009) and its trust-region and geometry steps: the model of the ProbNES start phase (powell-iteration.ts,
 * probnes-start.ts; docs/ALGORITHM.md §29). Coordinates are the caller's (the start phase passes the
 * internal ones, where the prior is N(0, I): Δ is in prior standard deviations).
 *
 * The model Q(x) = c + gᵀy + ½ yᵀHy, y = x − centre, solves
 *   min ¼‖H − H_prev‖_F²  subject to  Q(x_j) = f_j, j = 1..m.
 * Its Lagrangian gives H = H_prev + Σ_j λ_j y_j y_jᵀ with Σ_j λ_j = 0 and Σ_j λ_j y_j = 0, so (λ, c, g) solve
 * the dense (m + d + 1) KKT system
 *   [ A   E ] [ λ     ]   [ f − ½ yᵀH_prev y ]        A_jk = ½ (y_jᵀ y_k)²,
 *   [ Eᵀ  0 ] [ (c,g) ] = [ 0               ],       E_j = (1, y_jᵀ)
 * (Powell 2004, eqs. 2.4–2.7). NEWUOA keeps the inverse of this matrix updated; here it is solved afresh by
 * LU (m = 2d + 1: a 62 × 62 system at d = 20, far below a GP fit's cost). With H_prev = 0 and the stencil
 * x₀, x₀ ± Δe_i, the solution is NEWUOA's first model, whose Hessian is diagonal with the central
 * differences (f(x₀ + Δe_i) − 2f(x₀) + f(x₀ − Δe_i))/Δ² (Powell 2006, §2): exact on separable quadratics.
 */
import { LuDecomposition, Matrix } from 'ml-matrix';
import { trustRegionMaximiser } from './probnes-optimum.js';

/** Q(x) = c + gᵀ(x − centre) + ½ (x − centre)ᵀ H (x − centre). */
export interface Quadratic {
  centre: number[];
  c: number;
  g: number[];
  H: number[][];
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, v, i) => s + v * b[i], 0);
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

