/**
 * The front and its hypervolume history (src/domain/results/front.ts) on hand-computed cases. With
 * losses {(1,4), (2,2), (4,1)} and r = (5,5), the staircase's area is 4·1 + 3·2 + 1·1 = 11 (drawn
 * column by column: each front point's width to the next one's first loss times its height to r).
 */
import { describe, expect, it } from 'vitest';
import { frontHistory, frontOf, outcomesOf, type FrontTrial } from '../../src/domain/results/index.js';

const two = outcomesOf({ direction: 'minimize', outcomes: { objectives: [{ name: 'a', direction: 'minimize' }, { name: 'b', direction: 'maximize' }], constraints: [{ name: 'c' }], reference_point: [5, -5] } });

let id = 0;
const done = (values: number[], c = -1): FrontTrial => ({ trialId: ++id, state: 'COMPLETED', value: null, values, constraints: [c] });

describe('frontOf', () => {
  it('keeps the non-dominated feasible trials (equal ones all), sorted by loss, with the hypervolume against the declared point', () => {
    id = 0;
    const trials = [done([2, -2]), done([1, -4]), done([4, -1]), done([3, -3]), done([2, -2]), done([0, 0], 1), { trialId: ++id, state: 'COMPLETED', value: null, infeasible: true }, { trialId: ++id, state: 'ACTIVE', value: null }];
    const f = frontOf(two, trials);
    // (3,3) is dominated by (2,2); (0,0) dominates everything but violates its constraint.
    expect(f.trials.map((t) => t.trialId)).toEqual([2, 1, 5, 3]);
    expect(f.hypervolume).toBe(11);
    expect(f.referencePoint).toEqual({ value: [5, -5], derived: false });
    expect(f.evaluationCount).toBe(7);
    expect(f.feasibleCount).toBe(5);
  });

  it('derives the reference point from the front when none is declared, and has none without a feasible result', () => {
    id = 0;
    const free = outcomesOf({ direction: 'minimize', outcomes: { objectives: [{ name: 'a', direction: 'minimize' }, { name: 'b', direction: 'minimize' }], constraints: [], reference_point: null } });
    const f = frontOf(free, [done([1, 4]), done([4, 1])]);
    // nadir (4, 4), ideal (1, 1): r = 4 + 0.1·3 = 4.3 per objective; area: (1,4) gives 3.3 × 0.3, (4,1) below it 0.3 × 3.
    expect(f.referencePoint!.derived).toBe(true);
    expect(f.referencePoint!.value.map((v) => +v.toFixed(12))).toEqual([4.3, 4.3]);
    expect(f.hypervolume).toBeCloseTo(0.99 + 0.9, 12);
    expect(frontOf(free, []).referencePoint).toBeNull();
  });
});

describe('frontHistory', () => {
  it('adds each result\'s improvement against one reference point: monotone, ending at the front\'s hypervolume', () => {
    id = 0;
    const trials = [done([1, -4]), done([3, -3]), done([0, 0], 1), done([2, -2]), { trialId: ++id, state: 'COMPLETED', value: null, infeasible: true }, done([4, -1]), done([2, -2])];
    const h = frontHistory(two, trials);
    // (1,4): 4·1; (3,3): + 2·1 (x 3..5, y 3..4); violator: +0; (2,2): + 1·1 (x 2..3, y 3..4) + 3·1 (x 2..5, y 2..3) = 10; infeasible +0; (4,1): + 1·1 = 11; a copy of (2,2): +0.
    expect(h.points.map((p) => p.hypervolume)).toEqual([4, 6, 6, 10, 10, 11, 11]);
    expect(h.points.map((p) => p.frontSize)).toEqual([1, 2, 2, 2, 2, 3, 4]);
    expect(h.points.map((p) => p.index)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(h.points.at(-1)!.hypervolume).toBe(frontOf(two, trials).hypervolume);
  });
});
