/** bench:hpo's scoring: the best within a budget, tied ranks, and mean ranks over complete seeds only. */
import { describe, expect, it } from 'vitest';
import { bestAt, completeSeeds, meanRanks, median, tiedRanks, type HpoRun } from '../../bench/lib/hpo-score.js';

describe('bench:hpo scoring', () => {
  it('scores a run at a budget by the best of its first values', () => {
    expect(bestAt([0.5, 0.3, 0.4, 0.1], 2)).toBe(0.3);
    expect(bestAt([0.5, 0.3, 0.4, 0.1], 4)).toBe(0.1);
    expect(bestAt([0.5], 10)).toBe(0.5);
    expect(bestAt([], 3)).toBe(Infinity);
  });

  it('gives tied scores their mean rank', () => {
    expect(tiedRanks([0.2, 0.1, 0.2, 0.3])).toEqual([2.5, 1, 2.5, 4]);
    expect(tiedRanks([1, 1, 1])).toEqual([2, 2, 2]);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('averages ranks over the (task, seed) pairs every method completed', () => {
    const runs: HpoRun[] = [
      { task: 'a', seed: 0, method: 'x', values: [0.3, 0.1] },
      { task: 'a', seed: 0, method: 'y', values: [0.2, 0.2] },
      { task: 'b', seed: 0, method: 'x', values: [0.5, 0.5] },
      { task: 'b', seed: 0, method: 'y', values: [0.5, 0.4] },
      // Seed 1 of task a lacks y: not scored.
      { task: 'a', seed: 1, method: 'x', values: [0.9, 0.9] },
    ];
    expect(completeSeeds(runs, 'a', ['x', 'y'], 2)).toEqual([0]);
    const at1 = meanRanks(runs, ['a', 'b'], ['x', 'y'], 1);
    expect(at1.pairs).toBe(2);
    expect(at1.ranks.get('x')).toBe((2 + 1.5) / 2);
    expect(at1.ranks.get('y')).toBe((1 + 1.5) / 2);
    const at2 = meanRanks(runs, ['a', 'b'], ['x', 'y'], 2);
    expect(at2.ranks.get('x')).toBe((1 + 2) / 2);
    expect(at2.ranks.get('y')).toBe((2 + 1) / 2);
  });
});
