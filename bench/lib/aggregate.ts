/**
 * Groups run records by (function, dim, method) and turns them into per-evaluation regret
 * statistics over seeds, for both scorings (scoring.ts).
 */
import type { MethodName } from '../../src/engine/index.js';
import type { RunRecord } from './run.js';
import { bestSoFar, meanScoreCurve, regretOf, seedStats, type SeedStats } from './scoring.js';

export interface Group {
  fn: string;
  dim: number;
  method: MethodName;
  seeds: number;
  budget: number;
  /** Index n − 1: regret statistics of the best queried point after n evaluations. */
  best: SeedStats[];
  /** Index n − 1: regret statistics under mean scoring (NaN mean where undefined). */
  mean: SeedStats[];
  /** Mean wall time per run, ms. */
  ms: number;
}

export function taskLabel(fn: string, dim: number): string {
  return `${fn} ${dim}-D`;
}

export function aggregate(records: readonly RunRecord[]): Group[] {
  const byKey = new Map<string, RunRecord[]>();
  for (const r of records) {
    const key = `${r.function}\u0000${r.dim}\u0000${r.method}`;
    const list = byKey.get(key) ?? [];
    list.push(r);
    byKey.set(key, list);
  }
  const groups: Group[] = [];
  for (const runs of byKey.values()) {
    const budget = Math.min(...runs.map((r) => r.values.length));
    const bestCurves = runs.map((r) => bestSoFar(r.values).map((v) => regretOf(v, r.optimum)));
    const meanCurves = runs.map((r) => meanScoreCurve(r.mean_values, budget, r.batch).map((v) => regretOf(v, r.optimum)));
    const at = (curves: number[][], i: number): number[] => curves.map((c) => c[i]);
    groups.push({
      fn: runs[0].function,
      dim: runs[0].dim,
      method: runs[0].method,
      seeds: runs.length,
      budget,
      best: Array.from({ length: budget }, (_, i) => seedStats(at(bestCurves, i))),
      mean: Array.from({ length: budget }, (_, i) => seedStats(at(meanCurves, i))),
      ms: runs.reduce((a, r) => a + r.timings.total_ms, 0) / runs.length,
    });
  }
  return groups;
}

/** Statistics at n evaluations (clamped to the budget), or null if the run is shorter than n. */
export function statAt(curve: readonly SeedStats[], n: number): SeedStats | null {
  return n >= 1 && n <= curve.length ? curve[n - 1] : null;
}
