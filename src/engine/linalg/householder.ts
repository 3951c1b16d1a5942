/**
 * Householder reflectors applied in place (Golub & Van Loan, Matrix Computations, 4th ed., §5.1.4):
 * x ← (I − β v vᵀ) x, with v stored in a flat array. Shared by the QR of the REML error contrasts
 * (gp/reml-contrast.ts) and the least-squares solve (least-squares.ts).
 */

/**
 * x ← (I − β v vᵀ) x on entries k … n − 1 of the vector of X at offset o, v = V[ck + k … ck + n − 1]:
 * s = β Σ v_i x_i (i ascending), then x_i −= s v_i.
 */
export function reflectOne(V: Float64Array, ck: number, beta: number, k: number, n: number, X: Float64Array, o: number): void {
  let s = 0;
  for (let i = k; i < n; i++) s += V[ck + i] * X[o + i];
  s *= beta;
  for (let i = k; i < n; i++) X[o + i] -= s * V[ck + i];
}

/** reflectOne on four vectors of X at once, sharing each load of v (each vector's operations and their order unchanged). */
export function reflectFour(V: Float64Array, ck: number, beta: number, k: number, n: number, X: Float64Array, o0: number, o1: number, o2: number, o3: number): void {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (let i = k; i < n; i++) {
    const v = V[ck + i];
    s0 += v * X[o0 + i];
    s1 += v * X[o1 + i];
    s2 += v * X[o2 + i];
    s3 += v * X[o3 + i];
  }
  s0 *= beta; s1 *= beta; s2 *= beta; s3 *= beta;
  for (let i = k; i < n; i++) {
    const v = V[ck + i];
    X[o0 + i] -= s0 * v;
    X[o1 + i] -= s1 * v;
    X[o2 + i] -= s2 * v;
    X[o3 + i] -= s3 * v;
  }
}
