/**
 * The domain's codec (src/domain/studies/codec.ts): stored engine states read back only when the
 * study's strategy wrote them in the version it reads.
 */
import { describe, expect, it } from 'vitest';
import { readEngineState, StoredDataError } from '../../src/domain/studies/codec.js';
import { getStrategy, Rng, resolveOptions, type BaseState } from '../../src/engine/index.js';
import type { JsonValue } from '../../src/storage/index.js';
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
