/**
 * Reference DATA, not computed: the paper's final ln(mean regret) at 150 evaluations, read off the
 * published figure, as tabulated in docs/ALGORITHM.md §7 ("Paper figure values"). The paper scores
 * the evolution strategies and ProbNES at the distribution mean and BO/πBO/random at the best
 * queried point. Rastrigin's figure panel is 1-D.
 */
import type { MethodName } from '../../src/engine/index.js';

export const PAPER_SOURCE = 'paper figure (test functions, 15 seeds, q = 3), via docs/ALGORITHM.md §7';

const ORDER: MethodName[] = ['prob-snes', 'prob-xnes', 'prob-cmaes', 'snes', 'xnes', 'cmaes', 'pibo', 'bo', 'random'];
const ROWS: Record<string, number[]> = {
  'ackley:2': [-8.01, -6.97, -7.32, -1.46, -0.52, -1.43, 1.23, -0.22, 0.18],
  'rastrigin:1': [-5.48, -18.0, -22.33, -1.14, -0.5, -0.62, -0.03, -5.49, -3.29],
  'branin:2': [-9.59, -13.93, -14.41, -3.47, -1.0, -3.18, 3.3, -2.34, 3.3],
  'griewank:2': [-21.28, -16.54, -18.54, -10.94, -3.76, -11.92, -3.51, -15.92, -4.34],
  'levy:2': [-7.17, -14.21, -15.21, -6.98, -4.55, -9.61, -3.52, -10.3, -2.38],
  'shekel:4': [1.69, 1.69, 1.69, 1.87, 2.06, 1.81, 2.07, 2.07, 2.32],
  'styblinski-tang:2': [-3.47, -11.73, -11.96, -4.46, 0.91, -0.03, 3.5, -5.4, 1.79],
  'three-hump-camel:2': [-18.18, -16.61, -16.76, -4.61, -5.89, -10.85, -0.78, -11.56, -2.91],
};

/** The paper's ln mean regret at 150 evaluations for (function, dim, method), or null. */
export function paperValue(fn: string, dim: number, method: MethodName): number | null {
  const row = ROWS[`${fn}:${dim}`];
  const i = ORDER.indexOf(method);
  return row && i >= 0 ? row[i] : null;
}

/** Methods the paper scored at the distribution mean (the others at the best queried point). */
export function isDistributionMethod(method: MethodName): boolean {
  return !['bo', 'pibo', 'random'].includes(method);
}
