/**
 * The storage units of work the optimisation loop relies on: a study and its generation-0 engine
 * state in one transaction, and commits with guarded trial updates (all or nothing).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage, type GenerationCommit, type Storage, type TrialUpdate } from '../../src/storage/index.js';
import { study } from './contract.js';

let s: Storage;
beforeEach(() => {
  s = SqliteStorage.open(':memory:');
});
afterEach(async () => {
  await s.close();
});

const NOW = '2025-01-01T00:00:01.000Z';
const newTrial = (x: number) => ({ state: 'REQUESTED' as const, generation: 0, parameters: { x }, point: [x], source: 'suggested' as const });
const lease = (trialId: number, expectedState: TrialUpdate['expectedState'] = 'REQUESTED'): TrialUpdate => ({
  trialId, expectedState, state: 'ACTIVE', clientId: 'w', leaseExpiresAt: '2025-01-01T00:10:00.000Z', value: null, stderr: null, failureReason: null, late: false, completedAt: null,
});
const commit = (c: Partial<GenerationCommit>) => s.commitGeneration('a', { expectedRevision: 1, generation: 0, engineState: null, newTrials: [], now: NOW, ...c });

describe('loop units of work (SQLite)', () => {
  it('createStudy with an initial engine state writes both; generation 0, revision 1', async () => {
    await s.createStudy(study('a'), { version: 1, state: { mean: [0] } });
    expect(await s.getEngineState('a')).toMatchObject({ generation: 0, revision: 1, state: { mean: [0] } });
  });

  it('createStudy writes nothing if the engine state cannot be written', async () => {
    await s.createStudy(study('a'), { version: 1, state: {} });
    // Same id again: the study insert fails, and so no second state either.
    await expect(s.createStudy(study('a'), { version: 1, state: { other: true } })).rejects.toThrow();
    expect((await s.getEngineState('a'))!.state).toEqual({});
  });

  it('a commit without engine state checks the revision without advancing it; trial updates are applied', async () => {
    await s.createStudy(study('a'), { version: 1, state: {} });
    expect((await commit({ newTrials: [newTrial(0.1), newTrial(0.2)] })).committed).toBe(true);
    const r = await commit({ trialUpdates: [lease(1)] });
    expect(r).toMatchObject({ committed: true, revision: 1 });
    expect(await s.getTrial('a', 1)).toMatchObject({ state: 'ACTIVE', clientId: 'w', leaseExpiresAt: '2025-01-01T00:10:00.000Z', updatedAt: NOW });
    expect(await commit({ expectedRevision: 0 })).toEqual({ committed: false, reason: 'revision_conflict' });
  });

  it('a guarded update that finds another state rolls the whole commit back (snapshot, inserts, other updates)', async () => {
    await s.createStudy(study('a'), { version: 1, state: { g: 0 } });
    await commit({ newTrials: [newTrial(0.1), newTrial(0.2)] });
    await commit({ trialUpdates: [lease(1)] });
    const r = await commit({ engineState: { version: 1, state: { g: 'x' } }, newTrials: [newTrial(0.3)], trialUpdates: [lease(2), lease(1)], studyState: { state: 'COMPLETED', reason: 'r' } });
    expect(r).toEqual({ committed: false, reason: 'trial_conflict' });
    expect((await s.getEngineState('a'))!).toMatchObject({ revision: 1, state: { g: 0 } });
    expect(await s.getTrial('a', 2)).toMatchObject({ state: 'REQUESTED' });
    expect(await s.getTrial('a', 3)).toBeNull();
    expect(await s.getStudy('default', 'a')).toMatchObject({ state: 'ACTIVE', trialCounts: { ACTIVE: 1, REQUESTED: 1 } });
  });

  it('a commit can complete the study', async () => {
    await s.createStudy(study('a'), { version: 1, state: {} });
    await commit({ studyState: { state: 'COMPLETED', reason: 'max_trials_reached' } });
    expect(await s.getStudy('default', 'a')).toMatchObject({ state: 'COMPLETED', reason: 'max_trials_reached' });
  });
});
