/**
 * Searches for a BBOB value below f_opt: n points, alternately uniform in [−5, 5]^d (the domain) and
 * at log-uniform distances 10^−8…10^0.5 around x_opt (where a sign or shift error would show first).
 * Used by bench/bbob-check.ts (10^6 points) and test/engine/bbob.test.ts (10^5).
 */
import type { BbobProblem } from '../../src/engine/benchmarks/bbob.js';
import type { Rng } from '../../src/engine/random/index.js';

/** The smallest f − f_opt found. */
export function probeMinimum(p: BbobProblem, n: number, rng: Rng): number {
  const d = p.dim, x = new Array<number>(d).fill(0);
  let min = Infinity;
  for (let j = 0; j < n; j++) {
    if (j % 2 === 0) for (let i = 0; i < d; i++) x[i] = 10 * rng.uniform() - 5;
    else {
      const r = 10 ** (-8 + 8.5 * rng.uniform());
      for (let i = 0; i < d; i++) x[i] = p.argmin[i] + r * rng.normal();
    }
    min = Math.min(min, p.f(x) - p.optimum);
  }
  return min;
}
