/**
 * The median stopping rule as a pure function: each of its four conditions, equality with the
 * median (not worse: Optuna's MedianPruner prunes only when strictly worse), the median of an even
 * count (the mean of the two middle values, numpy.percentile(…, 50)'s linear interpolation), the
 * direction, and the answer's wording for each reason (docs/early-stopping.md).
 */
import { describe, expect, it } from 'vitest';
import { objectiveOf } from '../../src/domain/results/index.js';
import { decideStop, isStopped, median, STOPPED_EARLY } from '../../src/domain/studies/stopping-rule.js';

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

describe('the median stopping rule\'s answers, word for word', () => {
  it('the median of numbers sorts them as numbers, not as text', () => {
    // As text, [10, 9, 1] sorts to [1, 10, 9] (median 10) and [10, 9, 2, 1] to [1, 10, 2, 9] (median 6).
    expect(median([10, 9, 1])).toBe(9);
    expect(median([10, 9, 2, 1])).toBe(5.5);
    expect(median([-1, -10, 5])).toBe(-1);
  });

  it('says why, in words, for every answer', () => {
    const d = { step: 2, own: own(9, 9, 9), completed: 3, peersAtStep: [1, 2, 3] };
    expect(decideStop(null, objectiveOf({ direction: 'minimize' }), d)).toEqual({ shouldStop: false, reason: 'no_rule', detail: 'the study has no stopping rule', median: null });
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, step: 1 })).toEqual({ shouldStop: false, reason: 'before_min_steps', detail: 'step 1 is below min_steps 2', median: null });
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, completed: 2 })).toEqual({ shouldStop: false, reason: 'warming_up', detail: '2 of the 3 completed trials the rule waits for (warmup_trials)', median: null });
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, peersAtStep: [] })).toEqual({ shouldStop: false, reason: 'no_peers_at_step', detail: 'no completed trial reported a value at step 2', median: null });
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), d)).toEqual({ shouldStop: true, reason: 'worse_than_median', detail: 'best value so far 9 against the median 2 of 3 completed trial(s) at step 2: worse, stop', median: 2 });
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { ...d, own: own(9, 1.5, 9) })).toEqual({ shouldStop: false, reason: 'not_worse_than_median', detail: 'best value so far 1.5 against the median 2 of 3 completed trial(s) at step 2: not worse', median: 2 });
  });

  it('the value reported at the step itself counts toward the best so far', () => {
    expect(decideStop(rule, objectiveOf({ direction: 'minimize' }), { step: 2, own: own(9, 9, 1), completed: 3, peersAtStep: [1, 2, 3] }).shouldStop).toBe(false);
  });

  it('a trial stopped early is a COMPLETED one whose failure_reason says so', () => {
    expect(STOPPED_EARLY).toBe('stopped_early');
    expect(isStopped({ state: 'COMPLETED', failureReason: STOPPED_EARLY })).toBe(true);
    expect(isStopped({ state: 'COMPLETED', failureReason: null })).toBe(false);
    expect(isStopped({ state: 'FAILED', failureReason: STOPPED_EARLY })).toBe(false);
  });
});
