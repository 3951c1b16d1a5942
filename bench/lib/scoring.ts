/**
 * Scoring of benchmark runs (ALGORITHM.md §7).
 *
 * - Best-queried-point scoring: the score after n evaluations is min(values[0..n−1]).
 * - Mean scoring: after the k-th update (which used k·q evaluations) f(μ_k) is evaluated outside
 *   the budget; the score at n evaluations is min over k ≤ ⌊n/q⌋ of f(μ_k). The prior mean μ_0 is
 *   excluded, so the score is undefined (NaN) for n < q.
 * - Regret = score − f*, clamped at 0; curves report ln(mean regret over seeds). ln 0 = −∞ cannot
 *   be drawn or averaged, so ln values are floored at LN_FLOOR = −40 (regret < 4.2e-18, below the
 *   double-precision resolution of every test function near its optimum); tables print "≤−40".
 */
export const LN_FLOOR = -40;

/** Running minimum: out[n−1] = min(values[0..n−1]). */
export function bestSoFar(values: readonly number[]): number[] {
  const out: number[] = [];
  let best = Infinity;
  for (const v of values) {
    if (v < best) best = v;
    out.push(best);
  }
  return out;
}

/** Mean-scoring value at n evaluations (NaN when no update has happened yet). */
export function meanScoreAt(meanValues: readonly number[], n: number, batch: number): number {
  const k = Math.min(Math.floor(n / batch), meanValues.length);
  if (k < 1) return NaN;
  let best = Infinity;
  for (let i = 0; i < k; i++) if (meanValues[i] < best) best = meanValues[i];
  return best;
}

/** Mean-scoring curve over n = 1…budget (index n − 1). */
export function meanScoreCurve(meanValues: readonly number[], budget: number, batch: number): number[] {
  return Array.from({ length: budget }, (_, i) => meanScoreAt(meanValues, i + 1, batch));
}

/** Regret clamped at 0 (NaN stays NaN: "no score yet"). */
export function regretOf(value: number, fstar: number): number {
  return Number.isNaN(value) ? NaN : Math.max(0, value - fstar);
}

/** ln with the floor of LN_FLOOR; 0 and tiny regrets map to the floor. */
export function lnFloored(v: number): number {
  if (Number.isNaN(v)) return NaN;
  return v <= 0 ? LN_FLOOR : Math.max(LN_FLOOR, Math.log(v));
}

export interface SeedStats {
  /** Mean regret over seeds. */
  mean: number;
  /** Standard error of that mean (sample std / √n; 0 for one seed). */
  se: number;
  n: number;
}

/** Mean and standard error over seeds, ignoring NaN (runs with no score yet). */
export function seedStats(regrets: readonly number[]): SeedStats {
  const xs = regrets.filter((r) => !Number.isNaN(r));
  const n = xs.length;
  if (n === 0) return { mean: NaN, se: NaN, n: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, se: 0, n };
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  return { mean, se: Math.sqrt(variance / n), n };
}

/** ln mean regret and its 95% band: mean ± 1.96·se on the regret scale, then ln (floored). */
export function lnBand(s: SeedStats): { ln: number; lo: number; hi: number } {
  return { ln: lnFloored(s.mean), lo: lnFloored(s.mean - 1.96 * s.se), hi: lnFloored(s.mean + 1.96 * s.se) };
}

/** Formats an ln value for a table: 2 decimals, "≤−40" at the floor, "–" when undefined. */
export function fmtLn(v: number): string {
  if (Number.isNaN(v)) return '–';
  if (v <= LN_FLOOR) return `≤${LN_FLOOR}`.replace('-', '−');
  return v.toFixed(2).replace('-', '−');
}
