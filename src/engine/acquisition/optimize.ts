/**
 * Maximise an acquisition score over the unit box [0, 1]^d: score random candidates, then refine
 * the best few with L-BFGS.
 *
 * Bounds by projection: L-BFGS runs unconstrained on g(y) = −score(P(y)) + ρ‖y − P(y)‖², P the
 * projection onto the box. Inside the box g is the score; outside, the score is frozen at the
 * boundary and the penalty pulls back, so the line search never needs a feasibility test and the
 * returned point is P(y*), always inside. Gradients are analytic when the caller has them, else
 * one-sided finite differences stepping into the box (the Monte Carlo q-EI with fixed base samples
 * is deterministic and piecewise smooth, which is all forward differences need).
 *
 * Glossary: d dimension; x ∈ [0, 1]^d; score(x) = log acquisition (−∞ allowed), to MAXIMISE.
 */
import { minimizeLbfgs, type Objective, type SplitObjective } from '../optim/lbfgs.js';

export type Score = (x: Float64Array) => number;
export type ScoreGrad = (x: Float64Array) => { value: number; grad: Float64Array };

export interface MaximizeOptions {
  /** Candidates are refined in order of score; this many distinct finite ones (default 5). */
  starts?: number;
  maxIterations?: number;
  /** Finite-difference step in unit-box coordinates (default 1e-6). */
  fdStep?: number;
}

const PENALTY = 1e3;

function project(y: ArrayLike<number>): Float64Array {
  const x = new Float64Array(y.length);
  for (let j = 0; j < y.length; j++) x[j] = Math.min(1, Math.max(0, y[j]));
  return x;
}

function fdGradient(score: Score, x: Float64Array, f0: number, h: number): Float64Array {
  const g = new Float64Array(x.length);
  for (let j = 0; j < x.length; j++) {
    const step = x[j] + h <= 1 ? h : -h;
    const xj = x[j];
    x[j] = xj + step;
    const f1 = score(x);
    x[j] = xj;
    g[j] = Number.isFinite(f1) ? (f1 - f0) / step : 0;
  }
  return g;
}

/** Best point (inside [0,1]^d) and its score, from `candidates` refined by projected L-BFGS. */
export function maximizeInBox(
  score: Score,
  scoreGrad: ScoreGrad | null,
  candidates: Float64Array[],
  values: Float64Array,
  opts: MaximizeOptions = {},
): { x: Float64Array; value: number } {
  const order = Array.from(values.keys()).filter((i) => Number.isFinite(values[i]));
  order.sort((a, b) => values[b] - values[a]);
  if (order.length === 0) {
    // Every candidate scores −∞ (no improvement anywhere): any candidate is as good as another.
    return { x: candidates[0], value: values[0] };
  }
  let bestX = candidates[order[0]];
  let bestV = values[order[0]];
  const h = opts.fdStep ?? 1e-6;
  // ∇g from the score's gradient at x = P(y): outside the box along j the score does not depend
  // on y_j (it sees P(y)), only the penalty does.
  const penalised = (y: Float64Array, x: Float64Array, value: number, grad: Float64Array) => {
    const g = new Float64Array(y.length);
    let pen = 0;
    for (let j = 0; j < y.length; j++) {
      const out = y[j] - x[j];
      g[j] = out !== 0 ? 2 * PENALTY * out : -grad[j];
      pen += out * out;
    }
    return { f: -value + PENALTY * pen, grad: g };
  };
  let objective: Objective | SplitObjective;
  if (scoreGrad) {
    objective = (y: Float64Array) => {
      const x = project(y);
      const { value, grad } = scoreGrad(x);
      return penalised(y, x, value, grad);
    };
  } else {
    // Finite differences cost d more scores; the split form (lbfgs.ts) asks for them only where the
    // line search reads the gradient, not at trial steps that fail the sufficient-decrease test.
    // The steps and the result are the same as computing them at every trial point.
    let lastY: Float64Array = new Float64Array(0), lastValue = NaN;
    objective = {
      value(y) {
        lastY = y;
        const x = project(y);
        lastValue = score(x);
        let pen = 0;
        for (let j = 0; j < y.length; j++) pen += (y[j] - x[j]) * (y[j] - x[j]);
        return -lastValue + PENALTY * pen;
      },
      gradient() {
        const x = project(lastY);
        const grad = Number.isFinite(lastValue) ? fdGradient(score, x, lastValue, h) : new Float64Array(x.length);
        return penalised(lastY, x, lastValue, grad).grad;
      },
    };
  }
  for (const i of order.slice(0, opts.starts ?? 5)) {
    const res = minimizeLbfgs(objective, candidates[i], { maxIterations: opts.maxIterations ?? 50, gradTol: 1e-7, fTol: 1e-10 });
    const x = project(res.x);
    const v = score(x);
    if (v > bestV) {
      bestV = v;
      bestX = x;
    }
  }
  return { x: bestX, value: bestV };
}
