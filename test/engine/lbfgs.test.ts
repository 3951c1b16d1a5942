import { describe, expect, it } from 'vitest';
import { minimizeLbfgs, type ObjectiveValue } from '../../src/engine/optim/lbfgs.js';

/** Extended Rosenbrock f = Σ 100(x_{i+1} − x_i²)² + (1 − x_i)²; published minimum f = 0 at x = 1. */
function rosenbrock(x: Float64Array): ObjectiveValue {
  const n = x.length;
  const grad = new Float64Array(n);
  let f = 0;
  for (let i = 0; i + 1 < n; i++) {
    const a = x[i + 1] - x[i] * x[i];
    const b = 1 - x[i];
    f += 100 * a * a + b * b;
    grad[i] += -400 * x[i] * a - 2 * b;
    grad[i + 1] += 200 * a;
  }
  return { f, grad };
}

describe('minimizeLbfgs', () => {
  it('finds the Rosenbrock minimum at (1, 1) from the classic start (−1.2, 1)', () => {
    const r = minimizeLbfgs(rosenbrock, [-1.2, 1], { gradTol: 1e-9, fTol: 0 });
    expect(r.converged).toBe(true);
    expect(r.reason).toBe('gradient');
    for (const v of r.x) expect(v).toBeCloseTo(1, 6);
    expect(r.f).toBeLessThan(1e-12);
  });

  it('finds the 10-D Rosenbrock minimum at 1s', () => {
    const x0 = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? -1.2 : 1));
    const r = minimizeLbfgs(rosenbrock, x0, { gradTol: 1e-8, fTol: 0, maxIterations: 1000 });
    expect(r.converged).toBe(true);
    for (const v of r.x) expect(v).toBeCloseTo(1, 5);
  });

  it('solves an ill-conditioned quadratic ½xᵀAx − bᵀx (exact minimiser A⁻¹b, A diagonal)', () => {
    const a = [1, 10, 100, 1000, 1e4];
    const b = [1, 2, 3, 4, 5];
    const fn = (x: Float64Array): ObjectiveValue => {
      let f = 0;
      const grad = new Float64Array(x.length);
      for (let i = 0; i < x.length; i++) {
        f += 0.5 * a[i] * x[i] * x[i] - b[i] * x[i];
        grad[i] = a[i] * x[i] - b[i];
      }
      return { f, grad };
    };
    const r = minimizeLbfgs(fn, [0, 0, 0, 0, 0], { gradTol: 1e-10, fTol: 0 });
    // f stops changing in float64 (|Δf| ≈ ‖g‖²/a ≈ 1e-17) before ‖g‖∞ reaches 1e-10, hence 'f_change'.
    expect(r.converged).toBe(true);
    r.x.forEach((v, i) => expect(v).toBeCloseTo(b[i] / a[i], 7));
  });

  it('backs off from a region where f is not finite (f = x² − log(2 − x), defined for x < 2)', () => {
    // Minimiser: 2x = −1/(2 − x) ⇒ 2x² − 4x − 1 = 0 ⇒ x = 1 − √1.5 (the root below 2).
    const fn = (x: Float64Array): ObjectiveValue => {
      const v = x[0];
      const f = v < 2 ? v * v - Math.log(2 - v) : NaN;
      return { f, grad: Float64Array.of(2 * v + 1 / (2 - v)) };
    };
    const r = minimizeLbfgs(fn, [1.9], { gradTol: 1e-10, fTol: 0 });
    expect(r.converged).toBe(true);
    expect(r.x[0]).toBeCloseTo(1 - Math.sqrt(1.5), 8);
  });

  it('reports a non-finite start and an iteration cap honestly', () => {
    const bad = minimizeLbfgs(() => ({ f: NaN, grad: Float64Array.of(0) }), [0]);
    expect(bad.reason).toBe('non_finite_start');
    expect(bad.converged).toBe(false);
    const capped = minimizeLbfgs(rosenbrock, [-1.2, 1], { maxIterations: 3, fTol: 0 });
    expect(capped.reason).toBe('max_iterations');
    expect(capped.iterations).toBe(3);
    expect(capped.converged).toBe(false);
  });
});

describe('minimizeLbfgs with a split objective (value, then gradient on demand)', () => {
  it('takes exactly the steps of the combined form and skips the gradient at rejected line-search points', () => {
    // Rosenbrock from the classic start backtracks often; f = x² − log(2 − x) adds non-finite probes.
    const objectives: [(x: Float64Array) => ObjectiveValue, number[]][] = [
      [rosenbrock, [-1.2, 1]],
      [(x) => ({ f: x[0] * x[0] - Math.log(2 - x[0]), grad: Float64Array.of(2 * x[0] + 1 / (2 - x[0])) }), [1.99]],
    ];
    let skipped = 0;
    for (const [fn, x0] of objectives) {
      const combined = minimizeLbfgs(fn, x0);
      let last = new Float64Array(0), values = 0, gradients = 0;
      const splitRun = minimizeLbfgs(
        {
          value: (x) => { values++; last = x.slice(); return fn(x).f; },
          gradient: () => { gradients++; return fn(last).grad; },
        },
        x0,
      );
      expect(Array.from(splitRun.x)).toEqual(Array.from(combined.x));
      expect(splitRun.f).toBe(combined.f);
      expect(splitRun.iterations).toBe(combined.iterations);
      expect(splitRun.evaluations).toBe(combined.evaluations);
      expect(values).toBe(combined.evaluations);
      // Every accepted point needs its gradient (one per iteration plus the start).
      expect(gradients).toBeGreaterThanOrEqual(splitRun.iterations + 1);
      skipped += values - gradients;
    }
    expect(skipped).toBeGreaterThan(0);
  });
});
