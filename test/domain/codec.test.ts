/**
 * The domain's codec (src/domain/studies/codec.ts): stored engine states read back only when the
 * study's strategy wrote them in the version it reads, each refusal saying why; stored studies read
 * back with their method checked, parameters from before steps given their step, loop settings.
 */
import { describe, expect, it } from 'vitest';
import { readEngineState, readStudy, StoredDataError, writeEngineState, writeJson, writeJsonObject } from '../../src/domain/studies/codec.js';
import { getStrategy, Rng, resolveOptions, type BaseState } from '../../src/engine/index.js';
import type { JsonValue, StudyRecord } from '../../src/storage/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';

const stored = (s: BaseState) => ({ version: s.version, state: s as unknown as JsonValue });
const cmaesState = () => getStrategy('cmaes').init({ dim: 2, batchSize: 4, options: resolveOptions('cmaes', 2), box: null }, Rng.fromSeed(1));

describe('readEngineState', () => {
  it('returns a state of the study\'s method in the version its strategy reads', () => {
    const s = cmaesState();
    expect(readEngineState('a', 'cmaes', stored(s))).toEqual(s);
  });

  it('refuses another method\'s state, another version, and a non-object, with stored_data_unreadable', () => {
    const s = cmaesState();
    const refused = (f: () => unknown, message: RegExp) => {
      let err: unknown;
      try {
        f();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StoredDataError);
      expect(err).toMatchObject({ kind: 'unavailable', code: 'stored_data_unreadable' });
      expect((err as Error).message).toMatch(message);
    };
    refused(() => readEngineState('a', 'xnes', stored(s)), /belongs to method "cmaes", not the study's xnes/);
    refused(() => readEngineState('a', 'cmaes', { version: 9, state: { ...s, version: 9 } as unknown as JsonValue }), /version 9.*cmaes reads engine states of versions 1 to 2, not 9/);
    refused(() => readEngineState('a', 'cmaes', { version: 1, state: s as unknown as JsonValue }), /version 2 but was stored as version 1/);
    // A state an earlier release wrote is read through the strategy's migration (version 1 kept the options).
    const { params, ...v1 } = s;
    const migrated = readEngineState('a', 'cmaes', { version: 1, state: { ...v1, version: 1, options: { ...params } } as unknown as JsonValue });
    expect(migrated).toEqual(s);
    refused(() => readEngineState('a', 'cmaes', { version: 1, state: [1, 2] }), /not an object/);
  });

  it('over HTTP: a study whose stored state has an unknown version answers 503 stored_data_unreadable, and its document does not import', async () => {
    const { app, storage } = await makeTestApp();
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'cmaes', batch_size: 4 }) })).json().id as string;
    const rec = (await storage.getEngineState(id))!;
    const future = { ...(rec.state as Record<string, JsonValue>), version: 99 };
    const res = await storage.commitGeneration(id, { expectedRevision: rec.revision, generation: rec.generation, engineState: { version: 99, state: future }, newTrials: [], now: '2025-01-02T00:00:00.000Z' });
    expect(res.committed).toBe(true);

    const suggest = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1` });
    expect(suggest.statusCode).toBe(503);
    expect(suggest.json()).toMatchObject({ code: 'stored_data_unreadable' });
    expect(suggest.json().detail).toMatch(/version 99/);
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}/history` })).statusCode).toBe(503);

    const doc = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json();
    const imported = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imported.statusCode).toBe(400);
    expect(imported.json().errors).toContainEqual({ path: '/engine_states/0/version', message: 'must be a version cmaes reads (1 to 2)' });
    await app.close();
  });
});

describe('readStudy, and engine states word for word', () => {
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
    const s = cmaesState();
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
    const s = cmaesState();
    const trap = { ...s, get params(): never { throw new TypeError('trap'); } };
    expect(() => readEngineState('a', 'cmaes', { version: 2, state: trap as unknown as JsonValue })).toThrow(TypeError);
  });

  it('writes states and checked JSON as they are', () => {
    const s = cmaesState();
    expect(writeEngineState(s)).toEqual({ version: 2, state: s });
    expect(readEngineState('a', 'cmaes', writeEngineState(s))).toEqual(s);
    const o = { a: [1, 'b', null] };
    expect(writeJson(o)).toBe(o);
    expect(writeJsonObject(o)).toBe(o);
  });
});
