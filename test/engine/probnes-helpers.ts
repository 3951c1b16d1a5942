/**
 * Brute-force references for the ProbNES tests, written from ALGORITHM.md §3/§5 directly and
 * independently of the engine: small dense matrices as number[][], a Gauss–Jordan inverse, the
 * Gaussian density by determinant and inverse, and a Taylor-series matrix exponential.
 */
import type { GpHyper } from '../../src/engine/gp/types.js';

export function inverse(A: number[][]): number[][] {
  const n = A.length;
  const M = A.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    const piv = M[c][c];
    for (let j = 0; j < 2 * n; j++) M[c][j] /= piv;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r][c];
      if (f !== 0) for (let j = 0; j < 2 * n; j++) M[r][j] -= f * M[c][j];
    }
  }
  return M.map((row) => row.slice(n));
}

function det(A: number[][]): number {
  const n = A.length;
  const M = A.map((r) => r.slice());
  let d = 1;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    if (p !== c) {
      [M[c], M[p]] = [M[p], M[c]];
      d = -d;
    }
    d *= M[c][c];
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / M[c][c];
      for (let j = c; j < n; j++) M[r][j] -= f * M[c][j];
    }
  }
  return d;
}

export function matMul2(A: number[][], B: number[][]): number[][] {
  return A.map((row) => B[0].map((_, j) => row.reduce((s, v, k) => s + v * B[k][j], 0)));
}

export function mvnPdf(x: number[], m: number[], S: number[][]): number {
  const d = x.length;
  const Si = inverse(S);
  const r = x.map((v, i) => v - m[i]);
  const q = r.reduce((s, ri, i) => s + ri * Si[i].reduce((t, v, j) => t + v * r[j], 0), 0);
  return Math.exp(-0.5 * q) / Math.sqrt((2 * Math.PI) ** d * det(S));
}

const lam = (h: GpHyper) => h.lengthscales.map((l, i) => h.lengthscales.map((_, j) => (i === j ? l * l : 0)));
const plus = (A: number[][], B: number[][], b = 1) => A.map((r, i) => r.map((v, j) => v + b * B[i][j]));

function kbar(h: GpHyper, U: number[][]): number[][] {
  return U.map((a, i) =>
    U.map((b, j) => h.outputscale * Math.exp(-0.5 * a.reduce((s, v, k) => s + (v - b[k]) ** 2 / h.lengthscales[k] ** 2, 0)) + (i === j ? h.noise : 0)),
  );
}

/** a(B) = τᵀ K̄⁻¹ τ over Ū (ALGORITHM.md §5) with τ_i = N(ū_i; μ, Σ + Λ), K̄ inverted in full. */
export function bruteA(h: GpHyper, U: number[][], mean: number[], cov: number[][]): number {
  const S = plus(cov, lam(h));
  const tau = U.map((u) => mvnPdf(u, mean, S));
  const Ki = inverse(kbar(h, U));
  return tau.reduce((s, ti, i) => s + ti * Ki[i].reduce((t, v, j) => t + v * tau[j], 0), 0);
}

/** V = R − θ² a over Ū, θ = s (2π)^{d/2} Πℓ, R = θ N(μ; μ, Λ + 2Σ) (ALGORITHM.md §3). */
export function bruteV(h: GpHyper, U: number[][], mean: number[], cov: number[][]): number {
  const d = mean.length;
  const theta = h.outputscale * (2 * Math.PI) ** (d / 2) * h.lengthscales.reduce((p, l) => p * l, 1);
  const R = theta * mvnPdf(mean, mean, plus(lam(h), cov, 2));
  return R - theta * theta * bruteA(h, U, mean, cov);
}

/** expm by its Taylor series with scaling and squaring (small matrices, moderate norms). */
export function expmSeries(A: number[][]): number[][] {
  const n = A.length;
  const norm = Math.max(...A.map((r) => r.reduce((s, v) => s + Math.abs(v), 0)));
  const k = Math.max(0, Math.ceil(Math.log2(norm + 1)) + 2);
  const As = A.map((r) => r.map((v) => v / 2 ** k));
  let term: number[][] = As.map((r, i) => r.map((_, j) => (i === j ? 1 : 0)));
  let sum = term.map((r) => r.slice());
  for (let m = 1; m < 30; m++) {
    term = matMul2(term, As).map((r) => r.map((v) => v / m));
    sum = plus(sum, term);
  }
  for (let i = 0; i < k; i++) sum = matMul2(sum, sum);
  void n;
  return sum;
}
