/**
 * The fitted model's optimum as one point of the batch (option `inject_optimum`;
 * docs/ALGORITHM.md §24). Once the GP mean has quadratic terms, the basis quadratic
 * m(u) = a0 + bᵀ(u − c) + (u − c)ᵀA(u − c) (maximised: the GP models −ỹ) says where the model
 * expects the best value; lq-CMA-ES evaluates its model's optimum in every iteration (Hansen 2019),
 * which is how it reaches the targets of ill-conditioned functions (BBOB f12 at d = 2) within 10·d
 * evaluations, where the mean step of §18 moves μ along Σg_μ only and μ follows the valley slowly.
 *
 * The point is the trust-region maximiser of m around the current ν (Nocedal & Wright 2006, §4.3,
 * the exact subproblem solution by the eigen-decomposition): in whitened coordinates
 * u = μ + L_Σ x, maximise g̃ᵀx + xᵀH̃x subject to ‖x‖ ≤ ρ, with g̃ = L_Σᵀ(b + 2A(μ − c)) the
 * model's gradient at μ and H̃ = L_Σᵀ A L_Σ. Writing B = −2H̃ (so the problem is min ½xᵀBx − g̃ᵀx),
 * x(λ) = (B + λI)⁻¹ g̃ with λ = 0 when B is positive definite and ‖x(0)‖ ≤ ρ, else the λ > max(0, −λ_min(B))
 * with ‖x(λ)‖ = ρ (found by bisection, ‖x(λ)‖ decreases in λ). In the "hard case" (g̃ orthogonal
 * to B's lowest eigenvector), the component along that eigenvector that reaches the boundary is
 * added. Unlike lq-CMA-ES's unconstrained optimum, the trust region keeps the point where the
 * model has data: a quadratic fitted on a few points far from the optimum extrapolates badly.
 * Glossary: d dimension; μ (d), Σ (d×d) the current ν; ρ = `optimum_radius` (Mahalanobis units).
 */
import { cholesky, fromRows, symEig } from '../linalg/index.js';
import type { QuadraticMean } from './probnes-bq.js';
import { type Bounds, clampToBounds } from './bounds.js';

/** The maximiser of the quadratic q(x) = gᵀx + xᵀHx over ‖x‖ ≤ radius (H symmetric; B = −2H). */
export function trustRegionMaximiser(g: ArrayLike<number>, H: number[][], radius: number): number[] {
  const d = g.length;
  const { values, vectors } = symEig(fromRows(H.map((row) => row.map((v) => -2 * v))));
  // g in B's eigenbasis: x(λ) = Σ_i (g'_i / (β_i + λ)) v_i.
  const gp = new Float64Array(d);
  // Some EqualityOperator mutants of this line are equivalent: j = d would only write past the end of a Float64Array of length d, which JavaScript ignores
  for (let j = 0; j < d; j++) {
    let s = 0;
    for (let i = 0; i < d; i++) s += vectors.data[i * d + j] * g[i];
    gp[j] = s;
  }
  const normAt = (lam: number) => {
    let n2 = 0;
    for (let j = 0; j < d; j++) {
      const den = values[j] + lam;
      // Some ConditionalExpression,EqualityOperator mutants of this line are equivalent: normAt is called at λ = 0 only when every β > 0, and the bisection's λ stays above −β_min, so den > 0 always; the other branches are a guard
      n2 += den > 0 ? (gp[j] / den) ** 2 : gp[j] === 0 ? 0 : Infinity;
    }
    return Math.sqrt(n2);
  };
  const lowest = values[0];
  let lam = 0;
  // Some EqualityOperator mutants of this line are equivalent: the two sides differ only at β_min = 0 or ‖x(0)‖ = ρ exactly, where both paths give the same boundary point
  if (!(lowest > 0 && normAt(0) <= radius)) {
    // Bisection on λ in (max(0, −β_min), hi] for ‖x(λ)‖ = ρ.
    let lo = Math.max(0, -lowest);
    const gNorm = Math.sqrt(gp.reduce((s, v) => s + v * v, 0));
    // Some ArithmeticOperator mutants of this line are equivalent: only the bracket's first upper end; the doubling below widens any bracket that is too small
    let hi = lo + gNorm / radius + Math.abs(lowest) + 1e-12;
    // Some ConditionalExpression,EqualityOperator,AssignmentOperator mutants of this line are equivalent: never runs: ‖x(λ)‖ ≤ ‖g‖/(β_min + λ) ≤ ρ at the first upper end; kept as a guard
    while (normAt(hi) > radius) hi *= 2;
    // Some ConditionalExpression,EqualityOperator,ArithmeticOperator,MethodExpression,UpdateOperator mutants of this line are equivalent: these change only how many bisection steps run past λ's relative precision of 1e-12, not the point to that precision
    for (let it = 0; it < 100 && hi - lo > 1e-12 * Math.max(1, hi); it++) {
      const mid = 0.5 * (lo + hi);
      // Some EqualityOperator mutants of this line are equivalent: differs only when ‖x(mid)‖ = ρ exactly, the root itself
      if (normAt(mid) > radius) lo = mid;
      else hi = mid;
    }
    lam = hi;
  }
  // Some ConditionalExpression,EqualityOperator mutants of this line are equivalent: λ > −β_min here (the bisection's upper end never reaches lo), so β_j + λ > 0 for every j
  const coef = Array.from(gp, (v, j) => (values[j] + lam > 0 ? v / (values[j] + lam) : 0));
  const n2 = coef.reduce((s, v) => s + v * v, 0);
  // Hard case: B not positive definite and x(λ) short of the boundary: move along the lowest eigenvector.
  // Some EqualityOperator,ConditionalExpression mutants of this line are equivalent: when x(λ) is on the boundary, n2 = ρ² and the hard case's step recomputes the same component; β_min = 0 exactly is the boundary case too
  if (lowest <= 0 && n2 < radius * radius) {
    // Some ArithmeticOperator,EqualityOperator mutants of this line are equivalent: dividing by ±1 is multiplying by it; at coef[0] = 0 both signs reach a maximiser (q is even along that eigenvector)
    coef[0] = Math.sqrt(radius * radius - (n2 - coef[0] * coef[0])) * (coef[0] < 0 ? -1 : 1);
  }
  const x = new Array<number>(d).fill(0);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) x[i] += vectors.data[i * d + j] * coef[j];
  return x;
}

/**
 * The point of the batch at the basis quadratic's trust-region maximiser around ν = N(μ, Σ),
 * projected onto the bounds (the service would project it anyway; projected here, the batch BQ
 * selection sees the point that is evaluated).
 */
export function modelOptimumPoint(quad: QuadraticMean, mean: number[], cov: number[][], radius: number, bounds: Bounds | null): number[] {
  const d = mean.length;
  const L = cholesky(fromRows(cov)).L;
  const l = (i: number, j: number) => L.data[i * d + j];
  const delta = mean.map((m, i) => m - quad.centre[i]);
  const grad = quad.b.map((bi, i) => bi + 2 * quad.A[i].reduce((s, a, j) => s + a * delta[j], 0)); // ∇m(μ)
  const g = Array.from({ length: d }, (_, j) => grad.reduce((s, v, i) => s + l(i, j) * v, 0)); // Lᵀ∇m
  const AL = quad.A.map((row) => Array.from({ length: d }, (_, j) => row.reduce((s, a, k) => s + a * l(k, j), 0)));
  const H = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => AL.reduce((s, row, k) => s + l(k, i) * row[j], 0))); // LᵀAL
  const x = trustRegionMaximiser(g, H, radius);
  const u = mean.map((m, i) => m + x.reduce((s, xj, j) => s + l(i, j) * xj, 0));
  return bounds ? clampToBounds(u, bounds) : u;
}
