/**
 * Gram-type products of row-major arrays, the GP fit's p×p and n×n symmetric products (gp/reml.ts,
 * gp/reml-contrast.ts). Every entry is one dot product over a contiguous pair of rows, summed in
 * ascending order from 0, four entries at a time sharing the loads of one row (as the Cholesky of
 * cholesky.ts): the tiling does not change any sum.
 */

/**
 * out (rows×rows, symmetric) = X Yᵀ's upper triangle mirrored: out_ab = out_ba = Σ_k x_ak y_bk for
 * b ≥ a; X and Y are rows×len (Y = X for a Gram matrix XXᵀ).
 */
export function rowDotsSymInto(x: Float64Array, y: Float64Array, rows: number, len: number, out: Float64Array): void {
  for (let a = 0; a < rows; a++) {
    const xa = a * len;
    let b = a;
    for (; b + 3 < rows; b += 4) {
      const y0 = b * len, y1 = y0 + len, y2 = y1 + len, y3 = y2 + len;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let k = 0; k < len; k++) {
        const v = x[xa + k];
        s0 += v * y[y0 + k];
        s1 += v * y[y1 + k];
        s2 += v * y[y2 + k];
        s3 += v * y[y3 + k];
      }
      out[a * rows + b] = s0;
      out[a * rows + b + 1] = s1;
      out[a * rows + b + 2] = s2;
      out[a * rows + b + 3] = s3;
    }
    for (; b < rows; b++) {
      const yb = b * len;
      let s = 0;
      for (let k = 0; k < len; k++) s += x[xa + k] * y[yb + k];
      out[a * rows + b] = s;
    }
  }
  for (let a = 0; a < rows; a++) for (let b = 0; b < a; b++) out[a * rows + b] = out[b * rows + a];
}

/**
 * P += sign · C Cᵀ (P n×n symmetric, C n×p): entry (i, j ≥ i) and its mirror receive sign·Σ_a c_ia c_ja
 * (a ascending) once; sign = −1 subtracts exactly (a + (−s) is a − s in IEEE arithmetic).
 */
export function addGramInto(P: Float64Array, n: number, C: Float64Array, p: number, sign: 1 | -1): void {
  let i = 0;
  // Two rows i, i + 1 at a time: their entries with j ≥ i + 2 share the loads of rows j … j + 3
  // (eight sums); (i, i), (i, i + 1) and (i + 1, i + 1) one by one. Every sum is the same as row by row.
  for (; i + 1 < n; i += 2) {
    const ci = i * p, cn = ci + p;
    addGramEntry(P, n, C, p, sign, i, i);
    addGramEntry(P, n, C, p, sign, i, i + 1);
    addGramEntry(P, n, C, p, sign, i + 1, i + 1);
    let j = i + 2;
    for (; j + 3 < n; j += 4) {
      const c0 = j * p, c1 = c0 + p, c2 = c1 + p, c3 = c2 + p;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
      for (let a = 0; a < p; a++) {
        const x = C[ci + a], y = C[cn + a];
        const z0 = C[c0 + a], z1 = C[c1 + a], z2 = C[c2 + a], z3 = C[c3 + a];
        s0 += x * z0;
        s1 += x * z1;
        s2 += x * z2;
        s3 += x * z3;
        t0 += y * z0;
        t1 += y * z1;
        t2 += y * z2;
        t3 += y * z3;
      }
      s0 *= sign; s1 *= sign; s2 *= sign; s3 *= sign;
      t0 *= sign; t1 *= sign; t2 *= sign; t3 *= sign;
      const ri = i * n, rn = ri + n;
      P[ri + j] += s0;
      P[ri + j + 1] += s1;
      P[ri + j + 2] += s2;
      P[ri + j + 3] += s3;
      P[rn + j] += t0;
      P[rn + j + 1] += t1;
      P[rn + j + 2] += t2;
      P[rn + j + 3] += t3;
      P[j * n + i] += s0;
      P[(j + 1) * n + i] += s1;
      P[(j + 2) * n + i] += s2;
      P[(j + 3) * n + i] += s3;
      P[j * n + i + 1] += t0;
      P[(j + 1) * n + i + 1] += t1;
      P[(j + 2) * n + i + 1] += t2;
      P[(j + 3) * n + i + 1] += t3;
    }
    for (; j < n; j++) {
      addGramEntry(P, n, C, p, sign, i, j);
      addGramEntry(P, n, C, p, sign, i + 1, j);
    }
  }
  if (i < n) addGramEntry(P, n, C, p, sign, i, i);
}

/** P_ij (and P_ji when j ≠ i) += sign · Σ_a c_ia c_ja, a ascending. */
function addGramEntry(P: Float64Array, n: number, C: Float64Array, p: number, sign: 1 | -1, i: number, j: number): void {
  const ci = i * p, cj = j * p;
  let s = 0;
  for (let a = 0; a < p; a++) s += C[ci + a] * C[cj + a];
  s *= sign;
  P[i * n + j] += s;
  if (j !== i) P[j * n + i] += s;
}
