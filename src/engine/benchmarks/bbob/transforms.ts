/**
 * The auxiliary transformations of the BBOB definitions (RR-6829, "Symbols and definitions"), on
 * Float64Arrays for speed (a benchmark run evaluates millions of points). Indices are 0-based here:
 * the definitions' (i − 1)/(D − 1) is i/(d − 1).
 */

/** Square matrix, row-major. */
export type Mat = Float64Array;

/** out = M v (M d×d row-major). */
export function matVec(M: Mat, v: ArrayLike<number>, d: number, out: Float64Array): Float64Array {
  for (let i = 0; i < d; i++) {
    let s = 0;
    const row = i * d;
    for (let j = 0; j < d; j++) s += M[row + j] * v[j];
    out[i] = s;
  }
  return out;
}

/** A · diag(lambda) · B, the composed linear maps such as Q Λ^α R, precomputed once per instance. */
export function composeDiag(A: Mat, lambda: ArrayLike<number>, B: Mat, d: number): Mat {
  const out = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < d; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += A[i * d + k] * lambda[k] * B[k * d + j];
      out[i * d + j] = s;
    }
  }
  return out;
}

export function identity(d: number): Mat {
  const I = new Float64Array(d * d);
  for (let i = 0; i < d; i++) I[i * d + i] = 1;
  return I;
}

/** Exponent ramp i/(d − 1), i = 0…d−1, the definitions' (i − 1)/(D − 1). */
export function ramp(d: number): Float64Array {
  return Float64Array.from({ length: d }, (_, i) => i / (d - 1));
}

/** Λ^α: diagonal α^{½·i/(d−1)} (condition number α). */
export function lambdaDiag(alpha: number, d: number): Float64Array {
  return ramp(d).map((t) => alpha ** (0.5 * t));
}

/**
 * T_osz, the oscillation applied coordinate-wise: x̂ = log|x|, sign(x)·exp(x̂ + 0.049(sin c₁x̂ + sin c₂x̂))
 * with c₁ = 10, c₂ = 7.9 for x > 0 and c₁ = 5.5, c₂ = 3.1 for x < 0; T_osz(0) = 0. Smooth, monotone,
 * identity up to small-scale ripples: it breaks the symmetry of the raw functions.
 */
export function tosz(x: number): number {
  if (x === 0) return 0;
  const h = Math.log(Math.abs(x));
  return x > 0 ? Math.exp(h + 0.049 * (Math.sin(10 * h) + Math.sin(7.9 * h))) : -Math.exp(h + 0.049 * (Math.sin(5.5 * h) + Math.sin(3.1 * h)));
}

export function toszInPlace(v: Float64Array): Float64Array {
  for (let i = 0; i < v.length; i++) v[i] = tosz(v[i]);
  return v;
}

/** T_asy^β: x_i^{1 + β·(i/(d−1))·√x_i} for x_i > 0, unchanged otherwise (breaks the symmetry of positive and negative sides). */
export function tasyInPlace(v: Float64Array, beta: number, t: Float64Array): Float64Array {
  for (let i = 0; i < v.length; i++) if (v[i] > 0) v[i] = v[i] ** (1 + beta * t[i] * Math.sqrt(v[i]));
  return v;
}

/** f_pen(x) = Σ max(0, |x_i| − 5)²: zero in the search domain [−5, 5]^d, quadratic outside. */
export function fpen(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    const e = Math.abs(x[i]) - 5;
    if (e > 0) s += e * e;
  }
  return s;
}

/** out = x − x_opt. */
export function shift(x: ArrayLike<number>, xopt: ArrayLike<number>, out: Float64Array): Float64Array {
  for (let i = 0; i < out.length; i++) out[i] = x[i] - xopt[i];
  return out;
}

/** Rastrigin's core 10(d − Σ cos 2πz_i) + ‖z‖², shared by f3, f4 and f15. */
export function rastrigin(z: ArrayLike<number>): number {
  let c = 0, q = 0;
  for (let i = 0; i < z.length; i++) {
    c += Math.cos(2 * Math.PI * z[i]);
    q += z[i] * z[i];
  }
  return 10 * (z.length - c) + q;
}

/** Σ w_i z_i², the (separable part of the) ellipsoids. */
export function weightedSquares(w: ArrayLike<number>, z: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < z.length; i++) s += w[i] * z[i] * z[i];
  return s;
}
