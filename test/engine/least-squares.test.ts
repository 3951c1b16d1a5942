/**
 * Least squares by Householder QR (src/engine/linalg/least-squares.ts) and the surrogate fit that
 * uses it (surrogate/quadratic.ts). Expected values: a 3 × 2 system solved by hand
 * from the normal equations; otherwise the Moore–Penrose solution A⁺y of ml-matrix's SVD (the
 * solver it replaces) and the least-squares optimality condition Aᵀ(Aβ − y) = 0 (Golub & Van Loan,
 * Matrix Computations, 4th ed., §5.3.1); for the surrogate, the coefficients of an exact quadratic.
 */
import { describe, expect, it } from 'vitest';
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { leastSquaresQr } from '../../src/engine/linalg/least-squares.js';
import { Rng } from '../../src/engine/random/index.js';
import { features, fitModel, gradientAndHessian, weightedSystem, type Observed } from '../../src/engine/surrogate/quadratic.js';

const svdSolve = (rows: number[][], y: number[]) =>
  new SingularValueDecomposition(new Matrix(rows), { autoTranspose: true }).solve(Matrix.columnVector(y)).getColumn(0);

const randomRows = (m: number, p: number, seed: number) => {
  const rng = Rng.fromSeed(seed);
  return Array.from({ length: m }, () => Array.from(rng.normals(p)));
};

/** max_j |(Aᵀ(Aβ − y))_j| relative to ‖A‖_F² ‖β‖ + ‖A‖_F ‖y‖ (zero at the least-squares solution). */
function normalResidual(rows: number[][], y: number[], beta: number[]): number {
  const r = rows.map((row, i) => row.reduce((s, a, j) => s + a * beta[j], 0) - y[i]);
  const g = beta.map((_, j) => rows.reduce((s, row, i) => s + row[j] * r[i], 0));
  const normA = Math.sqrt(rows.flat().reduce((s, v) => s + v * v, 0));
  const scale = normA * normA * Math.hypot(...beta) + normA * Math.hypot(...y);
  return Math.max(...g.map(Math.abs)) / scale;
}

describe('leastSquaresQr', () => {
  it('a 3 × 2 system by hand: AᵀA = [[2, 1], [1, 2]], Aᵀy = (5, 6), so β = (4/3, 7/3)', () => {
    const beta = leastSquaresQr([[1, 0], [0, 1], [1, 1]], [1, 2, 4])!;
    expect(beta[0]).toBeCloseTo(4 / 3, 14);
    expect(beta[1]).toBeCloseTo(7 / 3, 14);
  });

  it('well conditioned (99 × 66, the d = 10 full model\'s shape): the SVD\'s solution to 1e-12, and Aᵀ(Aβ − y) ≈ 0', () => {
    const rows = randomRows(99, 66, 1);
    const y = Array.from(Rng.fromSeed(2).normals(99));
    const beta = leastSquaresQr(rows, y)!;
    const ref = svdSolve(rows, y);
    const scale = Math.max(...ref.map(Math.abs));
    beta.forEach((v, j) => expect(Math.abs(v - ref[j]) / scale).toBeLessThan(1e-12));
    expect(normalResidual(rows, y, beta)).toBeLessThan(1e-14);
  });

  it('columns of very different scale (1 … 1e-6): still the least-squares solution (column scaling)', () => {
    const rows = randomRows(40, 8, 3).map((row) => row.map((v, j) => v * 10 ** (-j * 6 / 7)));
    const y = Array.from(Rng.fromSeed(4).normals(40));
    const beta = leastSquaresQr(rows, y)!;
    expect(beta).not.toBeNull();
    expect(normalResidual(rows, y, beta)).toBeLessThan(1e-14);
    const ref = svdSolve(rows, y);
    beta.forEach((v, j) => expect(Math.abs(v - ref[j]) / Math.abs(ref[j])).toBeLessThan(1e-6));
  });

  it('rank-deficient (a repeated column), fewer rows than columns, a zero column: null (the caller uses the SVD)', () => {
    const rows = randomRows(20, 5, 5).map((row) => [...row, row[2]]);
    const y = Array.from(Rng.fromSeed(6).normals(20));
    expect(leastSquaresQr(rows, y)).toBeNull();
    // Nearly repeated (relative 1e-12): κ₂ beyond 1e10 of the scaled matrix, so null as well.
    expect(leastSquaresQr(rows.map((row) => [...row.slice(0, 5), row[2] * (1 + 1e-12 * row[0])]), y)).toBeNull();
    expect(leastSquaresQr(randomRows(4, 6, 7), [1, 2, 3, 4])).toBeNull();
    expect(leastSquaresQr(randomRows(10, 3, 8).map((row) => [...row, 0]), Array.from({ length: 10 }, () => 1))).toBeNull();
  });

  it('null where the SVD would zero a singular value (κ₂ near 2/(ε·max(m, p))), even if the scaled matrix is fine', () => {
    // Two orthogonal-ish columns of scale 1 and 1e-15: the SVD truncates the small one, the QR must not answer.
    const rows = randomRows(30, 2, 9).map(([a, b]) => [a, 1e-15 * b]);
    expect(leastSquaresQr(rows, Array.from(Rng.fromSeed(10).normals(30)))).toBeNull();
  });
});

describe('the surrogate fit with the QR solver', () => {
  const sample = (n: number, count: number, seed: number, f: (x: number[]) => number, spread = 2, centre = 0): Observed[] => {
    const rng = Rng.fromSeed(seed);
    return Array.from({ length: count }, () => {
      const x = Array.from(rng.normals(n), (v) => centre + spread * v);
      return { x, y: f(x) };
    });
  };

  it('recovers an exact full quadratic at d = 10 (132 points, as ProbNES fits it: 99 × 66)', () => {
    // f(x) = Σ_i (i + 1)(x_i − 1)² + 0.3 Σ_{i<j} x_i x_j / (i + j + 1) − 2: H_ii = i + 1, H_ij = 0.15/(i + j + 1).
    const d = 10;
    const f = (x: number[]) => {
      let s = -2;
      for (let i = 0; i < d; i++) s += (i + 1) * (x[i] - 1) ** 2;
      for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) s += (0.3 * x[i] * x[j]) / (i + j + 1);
      return s;
    };
    const m = fitModel(sample(d, 132, 11, f), d);
    expect(m.kind).toBe('full');
    const { H } = gradientAndHessian(m, d);
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) expect(H[i][j]).toBeCloseTo(i === j ? i + 1 : 0.15 / (i + j + 1), 8);
  });

  it('agrees with the SVD fit to rounding on non-quadratic data, at spreads 1 and 1e-3 around x = 1', () => {
    const d = 10;
    const f = (x: number[]) => x.reduce((s, v, i) => s + (i + 1) * (v - 1) ** 2 + Math.sin(3 * v), 0);
    for (const spread of [1, 1e-3]) {
      const data = sample(d, 132, 12, f, spread, 1);
      const { rows, rhs } = weightedSystem(data, d);
      const a = svdSolve(rows, rhs);
      const b = fitModel(data, d).coefficients;
      // Compare the fitted values at the data (well determined whatever the conditioning).
      const pred = (beta: number[]) => data.map((o) => features('full', o.x.map((v, i) => v - data.reduce((p, q) => (q.y < p.y ? q : p)).x[i])).reduce((s, z, k) => s + z * beta[k], 0));
      const pa = pred(a), pb = pred(b);
      const range = Math.max(...data.map((o) => o.y)) - Math.min(...data.map((o) => o.y));
      pa.forEach((v, i) => expect(Math.abs(v - pb[i]) / range).toBeLessThan(1e-9));
    }
  });

  it('falls back to the pseudoinverse where the QR does not answer (fewer points than coefficients)', () => {
    const data = sample(10, 3, 13, (x) => x.reduce((s, v) => s + v * v, 0));
    const { rows, rhs } = weightedSystem(data, 10);
    expect(leastSquaresQr(rows, rhs)).toBeNull();
    const a = svdSolve(rows, rhs);
    const b = fitModel(data, 10).coefficients;
    const scale = Math.max(...a.map(Math.abs));
    b.forEach((v, i) => expect(Math.abs(v - a[i]) / scale).toBeLessThan(1e-10));
  });
});
