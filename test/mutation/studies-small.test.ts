/**
 * The small modules of src/domain/studies that the HTTP tests reach only through whole requests,
 * held directly to their definitions at the boundaries a plausible bug would move: the covariance
 * checks (cholesky.ts), trials as they read at a time (lease-view.ts), the stored loop settings
 * (loop-settings.ts) and the cost of a study (study-cost.ts, docs/capacity.md "Cost of a study").
 */
import { describe, expect, it } from 'vitest';
import { isNearlySymmetric, isPositiveDefinite } from '../../src/domain/studies/cholesky.js';
import { asRead, countsAsRead } from '../../src/domain/studies/lease-view.js';
import { DEFAULT_LOOP_SETTINGS, readLoopSettings, writeLoopSettings } from '../../src/domain/studies/loop-settings.js';
import { activeSetBound, checkStudyCost, studyCost, UNBOUNDED_HORIZON } from '../../src/domain/studies/study-cost.js';
import { ValidationError } from '../../src/domain/common/errors.js';
import type { TrialCounts, TrialRecord } from '../../src/storage/index.js';

describe('cholesky.ts', () => {
  it('positive definite: the identity and a correlated matrix are; an indefinite one and one singular to rounding are not', () => {
    expect(isPositiveDefinite([[1, 0], [0, 1]])).toBe(true);
    expect(isPositiveDefinite([[4, 1.9], [1.9, 1]])).toBe(true);
    expect(isPositiveDefinite([[1, 2], [2, 1]])).toBe(false);
    // Second pivot 1e-14 of the diagonal: below the relative threshold 1e-12, lost to rounding.
    expect(isPositiveDefinite([[1, 1], [1, 1 + 1e-14]])).toBe(false);
    expect(isPositiveDefinite([[1, 1], [1, 1 + 1e-10]])).toBe(true);
  });

  it('nearly symmetric: |a_ij − a_ji| ≤ tol·√(a_ii·a_jj), the bound inclusive', () => {
    // √(4·1) = 2: a difference of exactly 2e-8 is at the default tolerance 1e-8.
    expect(isNearlySymmetric([[4, 0], [2e-8, 1]])).toBe(true);
    expect(isNearlySymmetric([[4, 0], [3e-8, 1]])).toBe(false);
    expect(isNearlySymmetric([[4, 0], [3e-8, 1]], 2e-8)).toBe(true);
    // Every pair below the diagonal is looked at: here only (2, 1) differs.
    expect(isNearlySymmetric([[1, 0, 0], [0, 1, 0.5], [0, 0, 1]])).toBe(false);
    expect(isNearlySymmetric([[1, 0, 0.5], [0, 1, 0], [0, 0, 1]])).toBe(false);
    // A negative diagonal entry: the scale is √|a_ii·a_jj|, not NaN (which no difference would exceed).
    expect(isNearlySymmetric([[-1, 0.5], [0, 1]])).toBe(false);
    expect(isNearlySymmetric([])).toBe(true);
  });
});

describe('lease-view.ts', () => {
  const now = new Date('2026-01-01T12:00:00.000Z');
  // The fields asRead reads and writes; the rest of a record passes through untouched.
  const trial = (over: Partial<TrialRecord>): TrialRecord => ({ trialId: 1, state: 'ACTIVE', clientId: 'w', leaseExpiresAt: '2026-01-01T12:00:01.000Z', ...over }) as TrialRecord;

  it('an ACTIVE trial whose lease ran out (or runs out now) reads as REQUESTED, without a lease, its client kept', () => {
    for (const leaseExpiresAt of ['2026-01-01T11:59:59.999Z', now.toISOString()]) {
      expect(asRead(trial({ leaseExpiresAt }), now), leaseExpiresAt).toEqual({ trialId: 1, state: 'REQUESTED', clientId: 'w', leaseExpiresAt: null });
    }
  });

  it('any other trial reads as it is (the same record)', () => {
    for (const t of [trial({}), trial({ leaseExpiresAt: '2026-01-01T12:00:00.001Z' }), trial({ leaseExpiresAt: null }), trial({ state: 'REQUESTED', leaseExpiresAt: '2026-01-01T11:00:00.000Z' }), trial({ state: 'COMPLETED', leaseExpiresAt: '2026-01-01T11:00:00.000Z' })]) {
      expect(asRead(t, now)).toBe(t);
    }
  });

  it('counts: the expired leases move from ACTIVE to REQUESTED; none expired, the same counts', () => {
    const counts = { REQUESTED: 1, ACTIVE: 5, COMPLETED: 7, FAILED: 2, ABANDONED: 3 } as TrialCounts;
    expect(countsAsRead(counts, 0)).toBe(counts);
    expect(countsAsRead(counts, 2)).toEqual({ REQUESTED: 3, ACTIVE: 3, COMPLETED: 7, FAILED: 2, ABANDONED: 3 });
    expect(counts.ACTIVE).toBe(5);
  });
});

describe('loop-settings.ts', () => {
  it('absent: the defaults (repeats refused, no stopping rule)', () => {
    expect(readLoopSettings(undefined)).toEqual({ allowRepeats: false, stopping: null });
    expect(readLoopSettings({})).toEqual({ allowRepeats: false, stopping: null });
    expect(DEFAULT_LOOP_SETTINGS).toEqual({ allowRepeats: false, stopping: null });
  });

  it('allow_repeats only when it is true itself', () => {
    expect(readLoopSettings({ allow_repeats: true }).allowRepeats).toBe(true);
    for (const v of [false, 'true', 1, null]) expect(readLoopSettings({ allow_repeats: v }).allowRepeats, String(v)).toBe(false);
  });

  it('a stopping rule is read with its defaults; null, an array or a string is no rule', () => {
    expect(readLoopSettings({ stopping: { rule: 'median' } }).stopping).toEqual({ rule: 'median', min_steps: 0, warmup_trials: 5 });
    expect(readLoopSettings({ stopping: { rule: 'median', min_steps: 3, warmup_trials: 1 } }).stopping).toEqual({ rule: 'median', min_steps: 3, warmup_trials: 1 });
    for (const v of [null, [], 'median', 0]) expect(readLoopSettings({ stopping: v as never }).stopping, JSON.stringify(v)).toBeNull();
    expect(() => readLoopSettings({ stopping: { rule: 'percentile' } })).toThrow();
  });

  it('written as stored and read back', () => {
    const s = { allowRepeats: true, stopping: { rule: 'median' as const, min_steps: 2, warmup_trials: 4 } };
    expect(writeLoopSettings(s)).toEqual({ allow_repeats: true, stopping: { rule: 'median', min_steps: 2, warmup_trials: 4 } });
    expect(readLoopSettings(writeLoopSettings(s))).toEqual(s);
  });
});

describe('study-cost.ts', () => {
  it('no model: an active set of 1 (random, the evolution strategies)', () => {
    for (const m of ['random', 'cmaes', 'xnes', 'snes']) expect(activeSetBound(m, 10, {}, 500), m).toBe(1);
  });

  it('a model on every evaluation: max_trials, or UNBOUNDED_HORIZON without it (BO, πBO, lq-CMA-ES, a method not known)', () => {
    for (const m of ['bo', 'pibo', 'lq-cmaes', 'no-such-method']) {
      expect(activeSetBound(m, 10, {}, 70), m).toBe(70);
      expect(activeSetBound(m, 10, {}, null), m).toBe(UNBOUNDED_HORIZON);
    }
    expect(UNBOUNDED_HORIZON).toBe(1000);
    // An active-set cap is ProbNES's: BO's model still uses every evaluation.
    expect(activeSetBound('bo', 10, { active_set_cap: 50 }, 70)).toBe(70);
  });

  it('ProbNES: the cap, at least ⌈1.5·(d + 1)(d + 2)/2⌉ with the floor (default profile); the horizon without a cap', () => {
    // d = 10: ⌈1.5 · 11 · 12 / 2⌉ = 99 > 50.
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: 50 }, null)).toBe(99);
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: 50, profile: 'default' }, null)).toBe(99);
    // d = 3: ⌈1.5 · 4 · 5 / 2⌉ = 15 < 50; d = 4: ⌈1.5 · 5 · 6 / 2⌉ = 22.5 → 23 with a cap of 20.
    expect(activeSetBound('prob-xnes', 3, { active_set_cap: 50 }, null)).toBe(50);
    expect(activeSetBound('prob-snes', 4, { active_set_cap: 20 }, null)).toBe(23);
    // The paper profile has no floor unless asked for; the floor can be switched off.
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: 50, profile: 'paper' }, null)).toBe(50);
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: 50, profile: 'paper', active_set_floor: true }, null)).toBe(99);
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: 50, active_set_floor: false }, null)).toBe(50);
    // No cap (0 or absent): every evaluation.
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: 0 }, 300)).toBe(300);
    expect(activeSetBound('prob-cmaes', 10, {}, null)).toBe(UNBOUNDED_HORIZON);
    expect(activeSetBound('prob-cmaes', 10, { active_set_cap: -5 }, 40)).toBe(40);
  });

  it('the cost is d · q · n_A, refused above the limit only, at /batch_size with every factor named', () => {
    expect(studyCost('bo', 4, 3, {}, 50)).toBe(600);
    expect(() => checkStudyCost('bo', 4, 3, {}, 50, 600)).not.toThrow();
    let err: unknown = null;
    try {
      checkStudyCost('bo', 4, 3, {}, 50, 599);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).errors).toEqual([{
      path: '/batch_size',
      message: 'the study would cost 6.00e+2 (dimension 4 × batch_size 3 × active set 50), more than this server\'s limit 5.99e+2 (STUDY_COST_MAX): use fewer parameters, a smaller batch_size, a smaller options.active_set_cap, or max_trials for a method whose model uses every evaluation',
    }]);
  });
});
