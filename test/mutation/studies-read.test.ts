/**
 * Reading what the service stored and deciding on intermediate reports, held to their wording and
 * boundaries: the median stopping rule's answers (src/domain/studies/stopping-rule.ts, as Optuna's
 * MedianPruner: docs/early-stopping.md) and the codec's reading of stored studies and engine states
 * (src/domain/studies/codec.ts).
 */
import { describe, expect, it } from 'vitest';
import { objectiveOf } from '../../src/domain/results/index.js';
import { decideStop, isStopped, median, STOPPED_EARLY } from '../../src/domain/studies/stopping-rule.js';
import { readEngineState, readStudy, StoredDataError, writeEngineState, writeJson, writeJsonObject } from '../../src/domain/studies/codec.js';
import { getStrategy, Rng, resolveOptions } from '../../src/engine/index.js';
import type { JsonValue, StudyRecord } from '../../src/storage/index.js';

const minimize = objectiveOf({ direction: 'minimize' });
const rule = { rule: 'median' as const, min_steps: 2, warmup_trials: 3 };
const own = (...values: number[]) => values.map((value, step) => ({ step, value }));

describe('the median stopping rule', () => {
  it('the median of numbers sorts them as numbers, not as text', () => {
    // As text, [10, 9, 1] sorts to [1, 10, 9] (median 10) and [10, 9, 2, 1] to [1, 10, 2, 9] (median 6).
    expect(median([10, 9, 1])).toBe(9);
    expect(median([10, 9, 2, 1])).toBe(5.5);
    expect(median([-1, -10, 5])).toBe(-1);
  });

  it('says why, in words, for every answer', () => {
    const d = { step: 2, own: own(9, 9, 9), completed: 3, peersAtStep: [1, 2, 3] };
    expect(decideStop(null, minimize, d)).toEqual({ shouldStop: false, reason: 'no_rule', detail: 'the study has no stopping rule', median: null });
    expect(decideStop(rule, minimize, { ...d, step: 1 })).toEqual({ shouldStop: false, reason: 'before_min_steps', detail: 'step 1 is below min_steps 2', median: null });
    expect(decideStop(rule, minimize, { ...d, completed: 2 })).toEqual({ shouldStop: false, reason: 'warming_up', detail: '2 of the 3 completed trials the rule waits for (warmup_trials)', median: null });
    expect(decideStop(rule, minimize, { ...d, peersAtStep: [] })).toEqual({ shouldStop: false, reason: 'no_peers_at_step', detail: 'no completed trial reported a value at step 2', median: null });
    expect(decideStop(rule, minimize, d)).toEqual({ shouldStop: true, reason: 'worse_than_median', detail: 'best value so far 9 against the median 2 of 3 completed trial(s) at step 2: worse, stop', median: 2 });
    expect(decideStop(rule, minimize, { ...d, own: own(9, 1.5, 9) })).toEqual({ shouldStop: false, reason: 'not_worse_than_median', detail: 'best value so far 1.5 against the median 2 of 3 completed trial(s) at step 2: not worse', median: 2 });
  });

  it('the value reported at the step itself counts toward the best so far', () => {
    expect(decideStop(rule, minimize, { step: 2, own: own(9, 9, 1), completed: 3, peersAtStep: [1, 2, 3] }).shouldStop).toBe(false);
  });

  it('a trial stopped early is a COMPLETED one whose failure_reason says so', () => {
    expect(STOPPED_EARLY).toBe('stopped_early');
    expect(isStopped({ state: 'COMPLETED', failureReason: STOPPED_EARLY })).toBe(true);
    expect(isStopped({ state: 'COMPLETED', failureReason: null })).toBe(false);
    expect(isStopped({ state: 'FAILED', failureReason: STOPPED_EARLY })).toBe(false);
  });
});

describe('the codec', () => {
  const record = (over: Partial<StudyRecord> & Record<string, unknown>): StudyRecord => ({
    id: 's1',
    method: 'random',
    parameters: [{ name: 'x', type: 'float', scale: 'linear', bounds: [0, 1], step: null }],
    prior: { mean: [0.5] },
    options: {},
    ...over,
  }) as unknown as StudyRecord;

  it('refuses a study of a method this server does not know, saying which', () => {
    let err: unknown = null;
    try {
      readStudy(record({ method: 'simplex' }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoredDataError);
    expect((err as Error).message).toBe('study "s1": its method "simplex" is not one this server knows; this server cannot use it (restore a backup made for this release, or run the release that wrote it)');
  });

  it('reads parameters stored before steps existed with the step they had: 1 for an int, none for a float', () => {
    const parameters = [
      { name: 'f', type: 'float', scale: 'linear', bounds: [0, 1] },
      { name: 'i', type: 'int', scale: 'linear', bounds: [0, 9] },
      { name: 's', type: 'float', scale: 'linear', bounds: [0, 1], step: 0.25 },
      { name: 'c', type: 'categorical', choices: ['a', 'b'] },
    ];
    const s = readStudy(record({ parameters: parameters as never }));
    expect(s.parameters).toEqual([{ ...parameters[0], step: null }, { ...parameters[1], step: 1 }, parameters[2], parameters[3]]);
    expect('step' in (s.parameters[3] as object)).toBe(false);
    // Nothing missing: the stored list itself.
    const current = [{ name: 'x', type: 'float', scale: 'linear', bounds: [0, 1], step: null }];
    expect(readStudy(record({ parameters: current as never })).parameters).toBe(current);
  });

  it('reads the loop settings (absent: the defaults) and keeps the rest of the record', () => {
    expect(readStudy(record({})).loop).toEqual({ allowRepeats: false, stopping: null });
    const s = readStudy(record({ loopSettings: { allow_repeats: true, stopping: null }, name: 'n' }));
    expect(s.loop).toEqual({ allowRepeats: true, stopping: null });
    expect(s).toMatchObject({ id: 's1', method: 'random', name: 'n', prior: { mean: [0.5] }, options: {} });
  });

  it('an engine state: refused with the reason when it is not an object, another method\'s, or of another version than stored', () => {
    const s = getStrategy('cmaes').init({ dim: 2, batchSize: 4, options: resolveOptions('cmaes', 2), box: null }, Rng.fromSeed(1));
    const message = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(StoredDataError);
        return (e as Error).message.replace('; this server cannot use it (restore a backup made for this release, or run the release that wrote it)', '');
      }
      throw new Error('not refused');
    };
    expect(message(() => readEngineState('a', 'cmaes', { version: 2, state: null }))).toBe('study "a": its engine state is not an object');
    expect(message(() => readEngineState('a', 'cmaes', { version: 2, state: 'x' }))).toBe('study "a": its engine state is not an object');
    expect(message(() => readEngineState('a', 'cmaes', { version: 2, state: [] }))).toBe('study "a": its engine state is not an object');
    expect(message(() => readEngineState('a', 'xnes', writeEngineState(s)))).toBe('study "a": its engine state belongs to method "cmaes", not the study\'s xnes');
    expect(message(() => readEngineState('a', 'cmaes', { version: 2, state: { ...s, version: '2' } as unknown as JsonValue }))).toBe('study "a": its engine state has no version number ("2")');
    const { version: _, ...unversioned } = s;
    expect(message(() => readEngineState('a', 'cmaes', { version: 2, state: unversioned as unknown as JsonValue }))).toBe('study "a": its engine state has no version number (none)');
    expect(message(() => readEngineState('a', 'cmaes', { version: 1, state: s as unknown as JsonValue }))).toBe('study "a": its engine state has version 2 but was stored as version 1');
    // A version the strategy cannot read: the engine's reason, under the codec's.
    expect(message(() => readEngineState('a', 'cmaes', { version: 9, state: { ...s, version: 9 } as unknown as JsonValue }))).toMatch(/^study "a": its engine state \(version 9\) cannot be read: .*versions 1 to 2, not 9/);
  });

  it('a failure of the migration that is not the engine\'s own is not dressed as unreadable data', () => {
    const s = getStrategy('cmaes').init({ dim: 2, batchSize: 4, options: resolveOptions('cmaes', 2), box: null }, Rng.fromSeed(1));
    const trap = { ...s, get params(): never { throw new TypeError('trap'); } };
    expect(() => readEngineState('a', 'cmaes', { version: 2, state: trap as unknown as JsonValue })).toThrow(TypeError);
  });

  it('writes states and checked JSON as they are', () => {
    const s = getStrategy('cmaes').init({ dim: 2, batchSize: 4, options: resolveOptions('cmaes', 2), box: null }, Rng.fromSeed(1));
    expect(writeEngineState(s)).toEqual({ version: 2, state: s });
    expect(readEngineState('a', 'cmaes', writeEngineState(s))).toEqual(s);
    const o = { a: [1, 'b', null] };
    expect(writeJson(o)).toBe(o);
    expect(writeJsonObject(o)).toBe(o);
  });
});
