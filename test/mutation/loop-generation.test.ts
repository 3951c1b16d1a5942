/**
 * The generation bookkeeping of src/domain/loop/generation.ts that needs no engine, on a stand-in
 * snapshot: which ABANDONED trials the service gave up itself (a late result for them is accepted),
 * how many points of a request are extras of the generation, and when max_trials completes a study.
 * Expected values follow from the module's contract (its doc comments).
 */
import { describe, expect, it } from 'vitest';
import { completeIfDone, extrasAmong, givenUp, STUDY_COMPLETED, SUPERSEDED } from '../../src/domain/loop/generation.js';
import type { TrialRecord, TrialState } from '../../src/storage/index.js';
import { standInSnapshot } from '../helpers/stand-in-snapshot.js';

type Trial = Pick<TrialRecord, 'trialId' | 'state' | 'failureReason'>;

function snapshot(trials: Trial[], opts: { generationSize?: number; maxTrials?: number | null; studyState?: 'ACTIVE' | 'COMPLETED' } = {}) {
  return standInSnapshot(trials, {
    study: { maxTrials: opts.maxTrials ?? null, state: opts.studyState ?? 'ACTIVE' },
    studyState: null as unknown,
    generationSize: opts.generationSize ?? 3,
    // every trial here is a suggested trial of the current generation, in trial order
    generationTrials: () => trials,
  });
}

const trial = (trialId: number, state: TrialState, failureReason: string | null = null): Trial => ({ trialId, state, failureReason });

describe('givenUp', () => {
  it('is true exactly for trials the service abandoned (superseded, study completed)', () => {
    expect(SUPERSEDED).toBe('superseded');
    expect(STUDY_COMPLETED).toBe('study_completed');
    expect(givenUp(trial(1, 'ABANDONED', SUPERSEDED) as TrialRecord)).toBe(true);
    expect(givenUp(trial(1, 'ABANDONED', STUDY_COMPLETED) as TrialRecord)).toBe(true);
    // a client's own verdict, or no reason
    expect(givenUp(trial(1, 'ABANDONED', 'worker gave up') as TrialRecord)).toBe(false);
    expect(givenUp(trial(1, 'ABANDONED', null) as TrialRecord)).toBe(false);
    // the reason alone is not enough: the trial must be ABANDONED
    expect(givenUp(trial(1, 'FAILED', SUPERSEDED) as TrialRecord)).toBe(false);
    expect(givenUp(trial(1, 'REQUESTED', STUDY_COMPLETED) as TrialRecord)).toBe(false);
  });
});

describe('extrasAmong', () => {
  it('counts the points beyond the generation\'s first generationSize live ones', () => {
    const trials = [trial(1, 'COMPLETED'), trial(2, 'ACTIVE'), trial(3, 'ACTIVE'), trial(4, 'ACTIVE'), trial(5, 'REQUESTED')];
    const snap = snapshot(trials, { generationSize: 3 });
    expect(extrasAmong(snap, trials as TrialRecord[])).toBe(2);
    expect(extrasAmong(snap, [trials[3], trials[4]] as TrialRecord[])).toBe(2);
    expect(extrasAmong(snap, [trials[0], trials[2]] as TrialRecord[])).toBe(0);
  });

  it('does not count failed or abandoned points: the point asked in place of one is waited for', () => {
    const trials = [trial(1, 'FAILED'), trial(2, 'ACTIVE'), trial(3, 'ABANDONED', SUPERSEDED), trial(4, 'ACTIVE'), trial(5, 'ACTIVE'), trial(6, 'ACTIVE')];
    const snap = snapshot(trials, { generationSize: 3 });
    // live: 2, 4, 5 are the generation's three; 6 is the one extra
    expect(extrasAmong(snap, trials as TrialRecord[])).toBe(1);
    expect(extrasAmong(snap, [trials[5]] as TrialRecord[])).toBe(1);
    expect(extrasAmong(snap, [trials[4]] as TrialRecord[])).toBe(0);
  });
});

describe('completeIfDone', () => {
  it('completes the study when max_trials results are in and abandons only the points nobody holds', () => {
    const trials = [trial(1, 'COMPLETED'), trial(2, 'COMPLETED'), trial(3, 'ACTIVE'), trial(4, 'REQUESTED'), trial(5, 'REQUESTED')];
    const snap = snapshot(trials, { maxTrials: 2 });
    completeIfDone(snap);
    expect(snap.studyState).toEqual({ state: 'COMPLETED', reason: 'max_trials_reached' });
    expect(trials.map((t) => [t.state, t.failureReason])).toEqual([
      ['COMPLETED', null],
      ['COMPLETED', null],
      ['ACTIVE', null],
      ['ABANDONED', STUDY_COMPLETED],
      ['ABANDONED', STUDY_COMPLETED],
    ]);
  });

  it('does nothing below max_trials, without max_trials, or once the study is COMPLETED', () => {
    const below = [trial(1, 'COMPLETED'), trial(2, 'REQUESTED')];
    const a = snapshot(below, { maxTrials: 2 });
    completeIfDone(a);
    expect(a.studyState).toBeNull();
    expect(below[1]!.state).toBe('REQUESTED');

    const unbounded = [trial(1, 'COMPLETED'), trial(2, 'REQUESTED')];
    const b = snapshot(unbounded, { maxTrials: null });
    completeIfDone(b);
    expect(b.studyState).toBeNull();
    expect(unbounded[1]!.state).toBe('REQUESTED');

    const done = [trial(1, 'COMPLETED'), trial(2, 'REQUESTED')];
    const c = snapshot(done, { maxTrials: 1, studyState: 'COMPLETED' });
    completeIfDone(c);
    expect(c.studyState).toBeNull();
    expect(done[1]!.state).toBe('REQUESTED');
  });

  it('completes at more results than max_trials too (late results can overshoot it)', () => {
    const trials = [trial(1, 'COMPLETED'), trial(2, 'COMPLETED'), trial(3, 'COMPLETED')];
    const snap = snapshot(trials, { maxTrials: 2 });
    completeIfDone(snap);
    expect(snap.studyState).toEqual({ state: 'COMPLETED', reason: 'max_trials_reached' });
  });
});
