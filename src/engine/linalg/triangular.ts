/**
 * Triangular solves with many right-hand sides stored as ROWS: b and x are m×n row-major, one
 * right-hand side of length n per row, L is n×n lower-triangular (row-major). The GP fit with a
 * basis (gp/reml.ts) solves L X = Hᵀ and Lᵀ X = … for p right-hand sides at every objective
 * evaluation; `solveLowerMat` and `cholSolveMat` (cholesky.ts, right-hand sides as columns) go
 * through here by transposing in and out.
 *
 * Why rows: every right-hand side is then contiguous, the forward solve is a dot product over
 * row i of L and the solution so far, and four right-hand sides share each load of L (four
 * accumulators). The column layout updated a whole row of X for every L entry, a load and a store
 * per multiply–add: bench/probnes-speed.ts measured it at about a tenth of the Cholesky's speed
 * for n = 100, p = 66.
 *
 * Each entry is the same sum in the same order as the column-layout loops these replace
 * (forward: x_i = (b_i − Σ_{k<i} l_ik x_k, k ascending) · (1/l_ii); backward: x_k = (b_k −
 * Σ_{i>k} l_ik x_i, i descending) · (1/l_kk)), so the results are bit for bit the same. Both solve
 * in place when x === b.
 */

/** L X = B for the m rows of b (m×n) into x (m×n). */
export function solveLowerRowsInto(l: Float64Array, n: number, b: Float64Array, m: number, x: Float64Array): void {
  let r = 0;
  for (; r + 3 < m; r += 4) {
    const o0 = r * n, o1 = o0 + n, o2 = o1 + n, o3 = o2 + n;
    for (let i = 0; i < n; i++) {
      const li = i * n;
      let s0 = b[o0 + i], s1 = b[o1 + i], s2 = b[o2 + i], s3 = b[o3 + i];
      for (let k = 0; k < i; k++) {
        const lik = l[li + k];
        s0 -= lik * x[o0 + k];
        s1 -= lik * x[o1 + k];
        s2 -= lik * x[o2 + k];
        s3 -= lik * x[o3 + k];
      }
      const inv = 1 / l[li + i];
      x[o0 + i] = s0 * inv;
      x[o1 + i] = s1 * inv;
      x[o2 + i] = s2 * inv;
      x[o3 + i] = s3 * inv;
    }
  }
  for (; r < m; r++) {
    const o = r * n;
    for (let i = 0; i < n; i++) {
      const li = i * n;
      let s = b[o + i];
      for (let k = 0; k < i; k++) s -= l[li + k] * x[o + k];
      x[o + i] = s * (1 / l[li + i]);
    }
  }
}

/**
 * Lᵀ X = B for the m rows of b (m×n) into x (m×n), by back substitution in the order of the
 * column loop: row i of the solution is final once the rows below it are, then it is subtracted
 * from every earlier entry along row i of L (contiguous).
 */
export function solveLowerTRowsInto(l: Float64Array, n: number, b: Float64Array, m: number, x: Float64Array): void {
  if (x !== b) x.set(b.subarray(0, m * n));
  let r = 0;
  for (; r + 3 < m; r += 4) {
    const o0 = r * n, o1 = o0 + n, o2 = o1 + n, o3 = o2 + n;
    for (let i = n - 1; i >= 0; i--) {
      const li = i * n, inv = 1 / l[li + i];
      const y0 = (x[o0 + i] *= inv), y1 = (x[o1 + i] *= inv), y2 = (x[o2 + i] *= inv), y3 = (x[o3 + i] *= inv);
      for (let k = 0; k < i; k++) {
        const lik = l[li + k];
        x[o0 + k] -= lik * y0;
        x[o1 + k] -= lik * y1;
        x[o2 + k] -= lik * y2;
        x[o3 + k] -= lik * y3;
      }
    }
  }
  for (; r < m; r++) {
    const o = r * n;
    for (let i = n - 1; i >= 0; i--) {
      const li = i * n;
      const y = (x[o + i] *= 1 / l[li + i]);
      for (let k = 0; k < i; k++) x[o + k] -= l[li + k] * y;
    }
  }
}

/** Bᵀ of a row-major rows×cols array into `out` (cols×rows). */
export function transposeInto(b: Float64Array, rows: number, cols: number, out: Float64Array): void {
  for (let i = 0; i < rows; i++) {
    const bi = i * cols;
    for (let j = 0; j < cols; j++) out[j * rows + i] = b[bi + j];
  }
}
