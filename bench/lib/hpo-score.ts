/**
 * Scoring of bench:hpo: a run is the list of its objective values in evaluation order; its score at a
 * budget b is the best (lowest) of its first b values. Methods are ranked per (task, seed) at each budget
 * (1 = lowest score; tied methods share the mean of the ranks they span) and the ranks are averaged over
 * the (task, seed) pairs every method completed.
 */

export interface HpoRun {
  task: string;
  seed: number;
  method: string;
  values: number[];
}

/** The best of the first `budget` values (Infinity if there are none). */
export function bestAt(values: readonly number[], budget: number): number {
  let best = Infinity;
  for (let i = 0; i < Math.min(budget, values.length); i++) best = Math.min(best, values[i]!);
  return best;
}

/** Ranks of `scores` (1 = lowest), ties sharing their mean rank. */
export function tiedRanks(scores: readonly number[]): number[] {
  return scores.map((s) => {
    const below = scores.filter((v) => v < s).length;
    const equal = scores.filter((v) => v === s).length;
    return below + (equal + 1) / 2;
  });
}

export const median = (v: readonly number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};
export const mean = (v: readonly number[]): number => (v.length === 0 ? NaN : v.reduce((a, b) => a + b, 0) / v.length);

/**
 * The seeds of `task` for which every method has a run of at least `budget` values (a seed is scored
 * only whole, so that every method is ranked on the same seeds).
 */
export function completeSeeds(runs: readonly HpoRun[], task: string, methods: readonly string[], budget: number): number[] {
  const seeds = [...new Set(runs.filter((r) => r.task === task).map((r) => r.seed))].sort((a, b) => a - b);
  return seeds.filter((s) => methods.every((m) => runs.some((r) => r.task === task && r.seed === s && r.method === m && r.values.length >= budget)));
}

/** Mean rank of each method at `budget` over every (task, complete seed) pair; also how many pairs. */
export function meanRanks(runs: readonly HpoRun[], tasks: readonly string[], methods: readonly string[], budget: number): { ranks: Map<string, number>; pairs: number } {
  const sums = new Map(methods.map((m) => [m, 0]));
  let pairs = 0;
  for (const task of tasks) {
    for (const seed of completeSeeds(runs, task, methods, budget)) {
      const scores = methods.map((m) => bestAt(runs.find((r) => r.task === task && r.seed === seed && r.method === m)!.values, budget));
      tiedRanks(scores).forEach((rank, i) => sums.set(methods[i]!, sums.get(methods[i]!)! + rank));
      pairs++;
    }
  }
  return { ranks: new Map(methods.map((m) => [m, pairs ? sums.get(m)! / pairs : NaN])), pairs };
}
