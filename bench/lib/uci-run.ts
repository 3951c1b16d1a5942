/**
 * One UCI surrogate run: a (method, data set, seed) job through the benchmark loop (run.ts runLoop),
 * in the study coordinates of uci-task.ts. The strategies minimise, so they see −surrogate; the
 * record keeps the surrogate values themselves (higher is better).
 */
import type { MethodName, Options } from '../../src/engine/index.js';
import { runLoop, type LoopResult } from './run.js';
import type { UciTask } from './uci-task.js';

export interface UciRunSpec {
  method: MethodName;
  dataset: string;
  seed: number;
  budget: number;
  batch: number;
  options: Options;
}

export type UciRunRecord = Omit<LoopResult, 'values' | 'mean_values'> & {
  method: MethodName;
  dataset: string;
  dim: number;
  seed: number;
  batch: number;
  /** The surrogate value of every evaluated point, in order (target units; maximised). */
  values: number[];
  /** The surrogate at μ_k after the k-th update, evaluated outside the budget. */
  mean_values: number[];
};

export function runUciOne(spec: UciRunSpec, task: UciTask): UciRunRecord {
  const r = runLoop(
    { method: spec.method, dim: task.dim, seed: spec.seed, budget: spec.budget, batch: spec.batch, options: spec.options, box: null },
    (u) => ({ y: -task.atInternal(u), told: [...u] }),
    (mean) => -task.atInternal(mean),
  );
  return {
    method: spec.method,
    dataset: spec.dataset,
    dim: task.dim,
    seed: spec.seed,
    batch: spec.batch,
    ...r,
    values: r.values.map((v) => -v),
    mean_values: r.mean_values.map((v) => -v),
  };
}
