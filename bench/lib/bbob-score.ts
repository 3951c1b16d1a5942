/**
 * Scoring of BBOB runs as the field does it (COCO): a run reaches a target t when its best
 * evaluated f − f_opt so far is ≤ t; the targets are 10^2, 10^1, …, 10^−8 (11 of them); a run's score
 * at budget B is the share of targets reached within B evaluations. The runtime ECDF is the share
 * of (run, target) pairs reached against evaluations/d.
 */
import type { BbobJob } from './bbob-args.js';
import type { Provenance } from './provenance.js';
import type { RunRecord } from './run.js';
import type { Options } from '../../src/engine/index.js';

export const TARGETS: readonly number[] = Array.from({ length: 11 }, (_, k) => 10 ** (2 - k));

/** [evaluation count n (1-based), best f − f_opt after n evaluations], one entry per improvement. */
export type Trajectory = [number, number][];

/** One line of runs.jsonl. */
export interface BbobRunRecord {
  variant: string;
  method: string;
  fn: number;
  dim: number;
  instance: number;
  seed: number;
  batch: number;
  budget: number;
  f_opt: number;
  trajectory: Trajectory;
  /** The options the method ran with, defaults filled in. */
  options: Options;
  /** Wall ms from the start of the run to the generation that reached each budget (keyed by evaluations). */
  ms_at: Record<string, number>;
  timings: { total_ms: number; ask_ms: number; tell_ms: number; updates: number };
  provenance: Provenance;
  /** External peers only: NLopt's algorithm and version, and the evaluation count at each restart. */
  peer?: { algorithm: string; nlopt: string; restart_at: number[] };
}

/** Best-so-far f − f_opt, recorded at each improvement (clamped at 0: rounding can land a hair below f_opt). */
export function trajectoryOf(values: readonly number[], fopt: number): Trajectory {
  const out: Trajectory = [];
  let best = Infinity;
  values.forEach((v, i) => {
    const delta = Math.max(0, v - fopt);
    if (delta < best) {
      best = delta;
      out.push([i + 1, delta]);
    }
  });
  return out;
}

/** Best f − f_opt within the first n evaluations (Infinity before the first). */
export function bestAt(t: Trajectory, n: number): number {
  let best = Infinity;
  for (const [k, delta] of t) {
    if (k > n) break;
    best = delta;
  }
  return best;
}

/** Evaluations needed to reach `target`, or null if the run never did. */
export function hittingTime(t: Trajectory, target: number): number | null {
  for (const [k, delta] of t) if (delta <= target) return k;
  return null;
}

/** Number of TARGETS reached within n evaluations. */
export function targetsReached(t: Trajectory, n: number): number {
  const best = bestAt(t, n);
  return TARGETS.filter((target) => best <= target).length;
}

/** Share of the 11 targets reached within n evaluations, over a set of runs (0…1). */
export function targetShare(runs: readonly BbobRunRecord[], n: (r: BbobRunRecord) => number): number {
  if (runs.length === 0) return NaN;
  return runs.reduce((s, r) => s + targetsReached(r.trajectory, n(r)), 0) / (runs.length * TARGETS.length);
}

/**
 * The runtime ECDF of a set of runs (all of one dimension d): the points (evaluations/d, share of
 * (run, target) pairs reached by then), one step per distinct hitting time, with the runs' budget
 * as the last x. Pairs never reached count in the denominator only.
 */
export function ecdfPoints(runs: readonly BbobRunRecord[]): { x: number; y: number }[] {
  const total = runs.length * TARGETS.length;
  const times: number[] = [];
  for (const r of runs) for (const t of TARGETS) {
    const h = hittingTime(r.trajectory, t);
    if (h !== null && h <= r.budget) times.push(h / r.dim);
  }
  times.sort((a, b) => a - b);
  const pts: { x: number; y: number }[] = [];
  times.forEach((x, i) => {
    if (i + 1 < times.length && times[i + 1] === x) return; // one point per distinct time
    pts.push({ x, y: (i + 1) / total });
  });
  return pts;
}

/**
 * The ECDF's area over evaluations/d from `lo` to `hi` on a log scale, normalised to 0…1:
 * (1/ln(hi/lo)) ∫_{ln lo}^{ln hi} F(e^t) dt, F the step function of ecdfPoints (right-continuous, 0
 * before the first point). One number per method that weighs every budget of the range alike on the
 * log scale the field plots (an "anytime" score: 1 would be every target at lo·d already).
 */
export function ecdfArea(points: readonly { x: number; y: number }[], lo: number, hi: number): number {
  if (!(hi > lo && lo > 0)) throw new RangeError('ecdfArea: need 0 < lo < hi');
  let area = 0, y = 0, from = Math.log(lo);
  for (const p of points) {
    if (p.x > hi) break;
    const at = Math.log(Math.max(p.x, lo));
    area += y * (at - from);
    from = at;
    y = p.y;
  }
  area += y * (Math.log(hi) - from);
  return area / Math.log(hi / lo);
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Wall ms of a run up to evaluation n: the elapsed time after the generation that contains it (ends: evaluations done after each generation). */
export function msAt(elapsed: readonly number[], ends: readonly number[], n: number): number {
  if (elapsed.length === 0) return NaN;
  const k = ends.findIndex((e) => e >= n);
  return elapsed[k === -1 ? elapsed.length - 1 : k];
}

/** The runs.jsonl line of a finished run. */
export function toBbobRecord(job: BbobJob, r: RunRecord, budgetPerDim: readonly number[], provenance: BbobRunRecord['provenance']): BbobRunRecord {
  const ms_at = Object.fromEntries(budgetPerDim.map((k) => [String(k * job.dim), msAt(r.elapsed_ms ?? [], r.generation_ends ?? [], k * job.dim)]));
  return {
    variant: job.variant.label, method: job.variant.method, fn: job.fn, dim: job.dim, instance: job.instance, seed: r.seed,
    batch: r.batch, budget: job.budget, f_opt: r.optimum, trajectory: trajectoryOf(r.values, r.optimum),
    options: job.effectiveOptions, ms_at, timings: r.timings, provenance,
  };
}

