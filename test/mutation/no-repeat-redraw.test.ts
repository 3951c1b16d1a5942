/**
 * withoutRepeats (src/domain/loop/no-repeat.ts) with a stand-in snapshot and a scripted strategy, for
 * two rules Stryker found untested (the HTTP tests' random draws rarely reach them):
 *
 * - the answer never holds more points than were asked, although the redraw rounds ask the strategy
 *   for more points than are missing (1, 2, 4, … times as many), so one round can bring several new;
 * - each redraw is told what is pending, the study's REQUESTED and ACTIVE points and the points kept
 *   so far (a model-based strategy conditions its batch on them).
 */
import { describe, expect, it } from 'vitest';
import { withoutRepeats } from '../../src/domain/loop/no-repeat.js';
import type { StudySnapshot } from '../../src/domain/loop/study-snapshot.js';
import type { CompletedPoint } from '../../src/domain/loop/study-cache.js';
import { effectivePrior, type StudySpecInput } from '../../src/domain/studies/study-spec.js';
import { searchSpace, toInternal } from '../../src/domain/studies/transforms.js';

/** One int parameter k ∈ [0, 9]. */
const { parameters, prior } = effectivePrior({ name: 'k', parameters: [{ name: 'k', type: 'int', bounds: [0, 9] }] } as unknown as StudySpecInput);
const space = searchSpace(parameters, prior);
const u = (k: number) => toInternal(space, [k]);
/** The k of an internal point made by `u`. */
const kOf = (point: number[]): number => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].find((k) => u(k)[0] === point[0]) ?? Number.NaN;

/** A snapshot whose study completed `completed` and has `pending` REQUESTED, as no-repeat.ts reads it. */
function snapshot(completed: number[], pending: number[]) {
  const snap = {
    space,
    studyState: null as StudySnapshot['studyState'],
    storedCompletedKeys: async (of: (p: CompletedPoint) => string) => new Set(completed.map((k) => of({ parameters: { k } } as unknown as CompletedPoint))),
    freshlyCompleted: () => [],
    inState: () => pending.map((k) => ({ parameters: { k }, point: u(k), state: 'REQUESTED' })),
    pending: () => pending.map(u),
  };
  return snap as unknown as StudySnapshot & typeof snap;
}

describe('withoutRepeats', () => {
  it('answers no more points than asked when a redraw round brings more new configurations than are missing', async () => {
    const snap = snapshot([0, 1, 2, 3, 4, 5, 6, 7], []);
    const asked: number[] = [];
    // Round 0 (1 point): another repeat; round 1 (2 points): two new configurations.
    const draw = async (n: number) => {
      asked.push(n);
      return n === 1 ? [u(3)] : [u(8), u(9)];
    };
    const kept = await withoutRepeats(snap, [u(0)], draw);
    expect(asked).toEqual([1, 2]);
    expect(kept.map(kOf)).toEqual([8]);
    expect(snap.studyState).toBeNull();
  });

  it('tells every redraw the pending points and the ones kept so far', async () => {
    const snap = snapshot([0, 1, 2, 3], [5]);
    const seen: number[][] = [];
    const draw = async (n: number, pending: number[][]) => {
      seen.push(pending.map(kOf));
      return n === 1 && seen.length === 1 ? [u(1)] : [u(7), u(8)].slice(0, n);
    };
    // Asked for 0 (completed) and 6 (new): 6 is kept, one point is missing.
    const kept = await withoutRepeats(snap, [u(0), u(6)], draw);
    expect(kept.map(kOf)).toEqual([6, 7]);
    expect(seen).toEqual([[5, 6], [5, 6]]);
  });
});
