/**
 * Mixed tasks with one categorical parameter (the last coordinate, c ∈ {0, 1, 2}) on which a method's
 * categorical distribution must leave its prior's mode for the best choice: shared by the ProbNES
 * lock-in tests (test/engine/probnes-mixed-lockin.test.ts) and the ES baselines' (es-categorical.test.ts).
 */
import type { InitSpec } from '../../src/engine/index.js';

export interface MixedTask {
  dim: number;
  /** The categorical parameter's prior probabilities. */
  prior: number[];
  conditions?: { index: number; parent: number; values: number[] }[];
  f: (x: number[]) => number;
}

/** Plain: u ∈ [−3, 3]², optimum c = 2 (the prior's least likely choice), u = (0.5, −0.3), f = 0. */
export const PLAIN: MixedTask = { dim: 3, prior: [0.7, 0.2, 0.1], f: (x) => (x[0]! - 0.5) ** 2 + (x[1]! + 0.3) ** 2 + [1, 0.5, 0][x[2]!]! };

/**
 * SVC-like, conditional. Coordinates: u0 = C, u1 = γ (rbf), u2 = degree (poly), c = kernel (0 linear,
 * 1 poly, 2 rbf); the prior favours linear (0.4 at best), the optimum is rbf at C = 0.5, γ = 1.5 (f = 0).
 */
export const SVC: MixedTask = {
  dim: 4,
  prior: [0.6, 0.2, 0.2],
  conditions: [
    { index: 1, parent: 3, values: [2] },
    { index: 2, parent: 3, values: [1] },
  ],
  f: (x) => 0.2 * (x[0]! - 0.5) ** 2 + (x[3] === 0 ? 0.4 : x[3] === 1 ? 0.3 + 0.2 * (x[2]! - 1) ** 2 : 0.25 * (x[1]! - 1.5) ** 2),
};

/** The method's InitSpec for a task: numeric coordinates in [−3, 3], the categorical one's index in [0, 2]. */
export function mixedInitSpec(task: MixedTask, batchSize: number, options: InitSpec['options']): InitSpec {
  const { dim } = task;
  return {
    dim,
    batchSize,
    options,
    box: { lower: new Array<number>(dim - 1).fill(-3).concat([0]), upper: new Array<number>(dim - 1).fill(3).concat([2]) },
    categories: [task.prior],
    ...(task.conditions ? { conditions: task.conditions } : {}),
  };
}
