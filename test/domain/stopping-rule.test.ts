/**
 * The median stopping rule as a pure function: each of its four conditions, equality with the
 * median (not worse: Optuna's MedianPruner prunes only when strictly worse), the median of an even
 * count (the mean of the two middle values, numpy.percentile(…, 50)'s linear interpolation), and the
 * direction.
 */
import { describe, expect, it } from 'vitest';
import { objectiveOf } from '../../src/domain/results/index.js';
import { decideStop, median } from '../../src/domain/studies/stopping-rule.js';

const rule = { rule: 'median' as const, min_steps: 2, warmup_trials: 3 };
const own = (...values: number[]) => values.map((value, step) => ({ step, value }));

describe('median stopping rule', () => {
  it('median: middle value, or the mean of the two middle ones (numpy percentile 50)', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('needs a rule, step ≥ min_steps, warmup_trials completed and a peer at the step', () => {
    const d = { step: 2, own: own(9, 9, 9), completed: 3, peersAtStep: [1, 2, 3] };
    expect(decideStop(null, objectiveOf({ direction: 'minimize' }), d).reason).toBe('no_rule');
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, step: 1 }).reason).toBe('before_min_steps');
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, completed: 2 }).reason).toBe('warming_up');
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, peersAtStep: [] }).reason).toBe('no_peers_at_step');
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), d)).toMatchObject({ shouldStop: true, reason: 'worse_than_median', median: 2 });
  });

  it('compares the best value over the steps up to this one, strictly', () => {
    const peers = { completed: 3, peersAtStep: [1, 2, 3] };
    // Best so far 2 (step 1) equals the median: not worse.
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { step: 2, own: own(5, 2, 4), ...peers }).shouldStop).toBe(false);
    // A later step's better value does not count for step 2.
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { step: 2, own: [...own(5, 3, 4), { step: 3, value: 0 }], ...peers }).shouldStop).toBe(true);
    // Maximising: the best is the largest, and worse means below the median.
    expect(decideStop(rule, objectiveOf({ direction: 'maximize' }), { step: 2, own: own(0, 1.5, 1), ...peers }).shouldStop).toBe(true);
    expect(decideStop(rule, objectiveOf({ direction: 'maximize' }), { step: 2, own: own(0, 2, 1), ...peers }).shouldStop).toBe(false);
  });
});
