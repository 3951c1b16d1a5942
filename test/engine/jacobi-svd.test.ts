/**
 * Minimum-norm least squares by the one-sided Jacobi SVD (src/engine/linalg/jacobi-svd.ts).
 * Expected values: small systems solved by hand; otherwise ml-matrix's SVD solution A⁺y (the solver
 * it replaces, on inputs where that one terminates), the normal equations Aᵀ(Ax − y) = 0, and for
 * wide matrices of full row rank the closed form A⁺y = Aᵀ(AAᵀ)⁻¹y (Golub & Van Loan, Matrix
 * Computations, 4th ed., §5.6). The fixture is the weighted design on which ml-matrix's SVD does not
 * terminate (mljs/matrix issue #70): the d = 10 full quadratic model of a BBOB f23 run (instance 4,
 * prob-cmaes with optimum_radius 3, generation 130) whose points had been clipped onto the box's corners.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Matrix, SingularValueDecomposition, solve } from 'ml-matrix';
import { minNormLeastSquares } from '../../src/engine/linalg/jacobi-svd.js';
import { Rng } from '../../src/engine/random/index.js';

const svdSolve = (rows: number[][], y: number[]) =>
  new SingularValueDecomposition(new Matrix(rows), { autoTranspose: true }).solve(Matrix.columnVector(y)).getColumn(0);

const matmul = (a: number[][], b: number[][]) => a.map((r) => b[0].map((_, j) => r.reduce((s, v, k) => s + v * b[k][j], 0)));
const randomMatrix = (rng: Rng, m: number, p: number) => Array.from({ length: m }, () => Array.from(rng.normals(p)));
const norm = (v: readonly number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

/** ‖Aᵀ(Ax − y)‖ relative to ‖A‖_F² ‖x‖ + ‖A‖_F ‖y‖: zero at any least-squares solution. */
function normalResidual(A: number[][], x: number[], y: number[]): number {
  const r = A.map((row, i) => row.reduce((s, v, j) => s + v * x[j], 0) - y[i]);
  const g = A[0].map((_, j) => A.reduce((s, row, i) => s + row[j] * r[i], 0));
  const fro = Math.sqrt(A.flat().reduce((s, v) => s + v * v, 0));
  return norm(g) / (fro * fro * norm(x) + fro * norm(y));
}

describe('minNormLeastSquares (one-sided Jacobi SVD)', () => {
  it('hand-solved systems: a diagonal with a zero, and the 3 × 2 normal equations', () => {
    // A = diag(2, 0): A⁺ = diag(1/2, 0), so A⁺ (4, 7) = (2, 0).
    expect(minNormLeastSquares([[2, 0], [0, 0]], [4, 7])).toEqual([2, 0]);
    // A = [[1, 0], [0, 1], [1, 1]], y = (1, 2, 4): AᵀA = [[2, 1], [1, 2]], Aᵀy = (5, 6) → x = (4/3, 7/3).
    const x = minNormLeastSquares([[1, 0], [0, 1], [1, 1]], [1, 2, 4]);
    expect(x[0]).toBeCloseTo(4 / 3, 14);
    expect(x[1]).toBeCloseTo(7 / 3, 14);
    // Two equal columns: the minimum-norm solution splits the weight evenly, A⁺ (2, 2) = (1, 1).
    const e = minNormLeastSquares([[1, 1], [1, 1]], [2, 2]);
    expect(e[0]).toBeCloseTo(1, 14);
    expect(e[1]).toBeCloseTo(1, 14);
  });

  it('agrees with ml-matrix\'s SVD to 1e-9 on full-rank and rank-deficient tall matrices up to 99 × 66', () => {
    const rng = Rng.fromSeed(31);
    for (const [m, p, rank] of [[99, 66, 66], [99, 66, 40], [30, 21, 21], [30, 21, 5], [12, 12, 11], [5, 1, 1]]) {
      const A = matmul(randomMatrix(rng, m, rank), randomMatrix(rng, rank, p));
      const y = Array.from(rng.normals(m));
      const x = minNormLeastSquares(A, y);
      const ref = svdSolve(A, y);
      expect(norm(x.map((v, i) => v - ref[i])) / norm(ref)).toBeLessThan(1e-9);
      expect(normalResidual(A, x, y)).toBeLessThan(1e-12);
    }
  });

  it('wide matrices of full row rank: x = Aᵀ(AAᵀ)⁻¹y, the exact solution of least norm', () => {
    const rng = Rng.fromSeed(32);
    for (const [m, p] of [[3, 10], [20, 66]]) {
      const A = randomMatrix(rng, m, p);
      const y = Array.from(rng.normals(m));
      const x = minNormLeastSquares(A, y);
      const At = A[0].map((_, j) => A.map((r) => r[j]));
      const z = solve(new Matrix(matmul(A, At)), Matrix.columnVector(y)).getColumn(0);
      const ref = A[0].map((_, j) => A.reduce((s, row, i) => s + row[j] * z[i], 0));
      expect(norm(x.map((v, i) => v - ref[i])) / norm(ref)).toBeLessThan(1e-10);
    }
  });

  it('returns on the design where ml-matrix\'s SVD never does, with a least-squares solution', { timeout: 90_000 }, () => {
    const path = new URL('../fixtures/linalg/f23-d10-corner-design.json.gz', import.meta.url);
    const { rows, rhs } = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as { rows: number[][]; rhs: number[][] };
    const y = rhs.map((r) => r[0]);
    expect([rows.length, rows[0].length]).toEqual([99, 66]);
    // Solved in a child process with a time limit: a solver that loops forever fails here instead of
    // hanging the test worker (a synchronous loop cannot be interrupted in-process).
    const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/solve-corner-design.ts', import.meta.url))], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.error, 'the solve did not finish within 60 s').toBeUndefined();
    expect(child.status, child.stderr).toBe(0);
    const { x } = JSON.parse(child.stdout) as { x: number[] };
    expect(x.every(Number.isFinite)).toBe(true);
    expect(normalResidual(rows, x, y)).toBeLessThan(1e-12);
    // Least norm: adding any null-space direction of A to x lengthens it; the directions here are
    // differences of columns that are identical in the design (features of coordinates that the
    // clipped points share), so x must give them equal coefficients.
    const identical: [number, number][] = [];
    for (let a = 0; a < 66; a++) for (let b = a + 1; b < 66; b++) if (rows.every((r) => r[a] === r[b])) identical.push([a, b]);
    expect(identical.length).toBeGreaterThan(0);
    for (const [a, b] of identical) expect(Math.abs(x[a] - x[b])).toBeLessThan(1e-9 * (1 + norm(x)));
  });

  it('non-finite entries give NaN, not a hang; empty shapes give zeros', () => {
    expect(minNormLeastSquares([[1, Infinity], [0, 1]], [1, 1]).every(Number.isNaN)).toBe(true);
    expect(minNormLeastSquares([[NaN]], [1]).every(Number.isNaN)).toBe(true);
    expect(minNormLeastSquares([], [])).toEqual([]);
  });
});
