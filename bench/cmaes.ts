/**
 * CMA-ES sanity benchmark: evaluations to reach f < 1e-8 on the 10-D sphere and the 10-D
 * Rosenbrock function, median over 21 seeds, default λ = 4 + ⌊3 ln d⌋ = 10.
 *
 * Setup (the engine always starts at the prior mean m0 = 0, so the functions are shifted instead of
 * the start point; CMA-ES is translation invariant, so this is the same as moving m0):
 * - sphere f(x) = Σ (x_i − 1)², σ0 = 1: equivalent to f = ‖x‖² from m0 = (−1, …, −1), f(m0) = 10;
 * - Rosenbrock f(x) = Σ_{i<d} 100 (x_{i+1} − x_i²)² + (1 − x_i)², m0 = 0, σ0 = 0.5 (optimum at 1s).
 * Success is f < 1e-8 within 20,000 evaluations; the median is over all 21 runs (a failed run
 * counts as ∞), and the success count is reported, because a run on Rosenbrock can end near its
 * local optimum. Reference (pycma, λ = 10): sphere ≈ 1,200–1,600, Rosenbrock ≈ 5,000–7,000.
 *
 * Run: npx tsx bench/cmaes.ts
 */
import { Rng } from '../src/engine/random/index.js';
import { cmaes } from '../src/engine/strategies/cmaes.js';
import type { Observation } from '../src/engine/strategies/types.js';

type F = (x: number[]) => number;
const sphere: F = (x) => x.reduce((s, v) => s + (v - 1) ** 2, 0);
const rosenbrock: F = (x) => {
  let s = 0;
  for (let i = 0; i + 1 < x.length; i++) s += 100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2;
  return s;
};

const D = 10;
const LAMBDA = 4 + Math.floor(3 * Math.log(D));
const TARGET = 1e-8;
const MAX_EVALS = 20_000;
const SEEDS = 21;

function run(f: F, sigma0: number, seed: number): number {
  let state = cmaes.init({ dim: D, batchSize: LAMBDA, options: { sigma0, active: true } }, Rng.fromSeed(seed));
  const history: Observation[] = [];
  while (history.length < MAX_EVALS) {
    const { points, state: s } = cmaes.ask(state, { history, pending: [] }, LAMBDA);
    const batch = points.map((x) => ({ x, y: f(x) }));
    for (const [k, o] of batch.entries()) {
      history.push(o);
      if (o.y < TARGET) return history.length - batch.length + k + 1;
    }
    state = cmaes.tell(s, { batch, history });
  }
  return Infinity;
}

function report(name: string, f: F, sigma0: number): void {
  const evals = Array.from({ length: SEEDS }, (_, s) => run(f, sigma0, 1000 + s)).sort((a, b) => a - b);
  const ok = evals.filter(Number.isFinite);
  const median = evals[(SEEDS - 1) / 2];
  console.log(
    `${name.padEnd(12)} d=${D} λ=${LAMBDA} σ0=${sigma0}: median ${median} evals, ` +
      `success ${ok.length}/${SEEDS}, range ${ok[0]}–${ok[ok.length - 1]}`,
  );
}

report('sphere', sphere, 1);
report('rosenbrock', rosenbrock, 0.5);
