/**
 * A stand-in for the loop's StudySnapshot over a plain list of trials, for unit tests of the loop's
 * bookkeeping without storage or an engine: inState, count and change as StudySnapshot has them (change
 * edits the trial in place and is recorded in `changes`), plus whatever fields the test adds.
 */
import type { StudySnapshot, TrialChange } from '../../src/domain/loop/study-snapshot.js';
import type { TrialRecord, TrialState } from '../../src/storage/index.js';

export function standInSnapshot<T extends Pick<TrialRecord, 'trialId' | 'state'>, X extends object>(trials: T[], extra: X) {
  const snap = {
    ...extra,
    changes: [] as [number, TrialChange][],
    inState: (...states: TrialState[]) => trials.filter((t) => states.includes(t.state)),
    count: (state: TrialState) => trials.filter((t) => t.state === state).length,
    change(trialId: number, change: TrialChange) {
      snap.changes.push([trialId, change]);
      const t = trials.find((x) => x.trialId === trialId)!;
      Object.assign(t, change);
      return t;
    },
  };
  return snap as unknown as StudySnapshot & typeof snap;
}
