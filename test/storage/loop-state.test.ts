/**
 * The narrow reads of the optimisation loop: one request reads its live trials, the current
 * generation's suggested trials and the ids it names (never the whole history), and the completed
 * history comes in completion order when an engine call needs it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage, type NewTrial, type Storage } from '../../src/storage/index.js';
import { study } from './contract.js';

let s: Storage;
beforeEach(async () => {
  s = SqliteStorage.open(':memory:');
  await s.createStudy(study('a'), { version: 1, state: { generation: 0 } });
});
afterEach(async () => {
  await s.close();
});

const t = (generation: number, state: NewTrial['state'], extra: Partial<NewTrial> = {}): NewTrial => ({
  state, generation, parameters: { x: 0.5 }, point: [0], source: 'suggested', ...extra,
});
const done = (generation: number, completedAt: string, source: NewTrial['source'] = 'suggested') => t(generation, 'COMPLETED', { value: 1, completedAt, source });
const ids = (ts: { trialId: number }[]) => ts.map((x) => x.trialId);

describe('loadLoopState', () => {
  beforeEach(async () => {
    // Generation 0: 1 completed, 2 failed, 3 completed (late), 4 external; then the update to generation 1.
    await s.commitGeneration('a', { expectedRevision: 1, generation: 0, engineState: null, now: '2025-01-01T00:00:01.000Z',
      newTrials: [done(0, '2025-01-01T00:00:05.000Z'), t(0, 'FAILED'), done(0, '2025-01-01T00:00:03.000Z'), done(0, '2025-01-01T00:00:03.000Z', 'external')] });
    await s.commitGeneration('a', { expectedRevision: 1, generation: 1, engineState: { version: 1, state: { generation: 1 } }, now: '2025-01-01T00:00:06.000Z',
      newTrials: [t(1, 'ACTIVE', { clientId: 'w' }), t(1, 'ABANDONED'), t(0, 'REQUESTED'), done(1, '2025-01-01T00:00:07.000Z'), done(1, '2025-01-01T00:00:08.000Z', 'external')] });
  });

  it('reads the live trials, the current generation\'s suggested trials and the named ids, by trial id', async () => {
    const r = (await s.loadLoopState('default', 'a', { trialIds: [2, 99], knownRevision: null }))!;
    expect(ids(r.trials)).toEqual([2, 5, 6, 7, 8]);
    expect(r).toMatchObject({ revision: 2, nextTrialId: 10, engineState: { generation: 1, revision: 2, state: { generation: 1 } } });
    expect(r.study.trialCounts).toEqual({ REQUESTED: 1, ACTIVE: 1, COMPLETED: 5, FAILED: 1, ABANDONED: 1 });
  });

  it('leaves the engine state out when the caller holds that revision; null for an unknown study or another tenant', async () => {
    expect((await s.loadLoopState('default', 'a', { trialIds: [], knownRevision: 2 }))!.engineState).toBeNull();
    expect((await s.loadLoopState('default', 'a', { trialIds: [], knownRevision: 1 }))!.engineState).not.toBeNull();
    expect(await s.loadLoopState('default', 'nope', { trialIds: [], knownRevision: null })).toBeNull();
    expect(await s.loadLoopState('other', 'a', { trialIds: [], knownRevision: null })).toBeNull();
  });

  it('lists the completed trials in completion order: completed_at, then trial id', async () => {
    expect(ids(await s.listCompletedTrials('a'))).toEqual([3, 4, 1, 8, 9]);
  });
});
