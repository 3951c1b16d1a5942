/**
 * A group of commits on SQLite (TrialsRepo.commitMany, what the writer thread runs for each group):
 * one transaction, each commit in a savepoint of its own. The trials' guards are the guarded
 * updates themselves, so a commit whose second update finds its trial in another state has already
 * applied its first: the savepoint's rollback must take that back, with everything else the commit
 * would have written, and leave the commits before and after it in the group written.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage, type GenerationCommit, type TrialUpdate } from '../../src/storage/index.js';
import { openDatabase, type SqliteDatabase } from '../../src/storage/sqlite/connection.js';
import { TrialsRepo } from '../../src/storage/sqlite/trials-repo.js';
import { study } from './contract.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-group-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const NOW = '2025-01-01T00:00:01.000Z';
const LATER = '2025-01-01T00:00:02.000Z';
const newTrial = (x: number) => ({ state: 'REQUESTED' as const, generation: 0, parameters: { x }, point: [x], source: 'suggested' as const });
const change = (trialId: number, expectedState: TrialUpdate['expectedState'], state: TrialUpdate['state'], value: number | null = null): TrialUpdate => ({
  trialId, expectedState, state, clientId: 'w', leaseExpiresAt: null, value, stderr: null, failureReason: null, late: false, completedAt: value === null ? null : LATER,
});
const commit = (c: Partial<GenerationCommit>): GenerationCommit => ({ expectedRevision: 1, generation: 0, engineState: null, newTrials: [], now: NOW, ...c });

describe('a group commit on SQLite', () => {
  let s: SqliteStorage;
  let db: SqliteDatabase;
  let repo: TrialsRepo;
  beforeEach(async () => {
    const file = path.join(dir, `g${Math.random().toString(36).slice(2)}.db`);
    s = SqliteStorage.open(file, { writerThread: false });
    for (const id of ['a', 'b', 'c']) {
      await s.createStudy(study(id), { version: 1, state: { g: 0 } });
      await s.commitGeneration(id, commit({ newTrials: [newTrial(0.1), newTrial(0.2)] }));
    }
    // b's trial 1 is leased: a commit expecting it REQUESTED conflicts.
    await s.commitGeneration('b', commit({ trialUpdates: [change(1, 'REQUESTED', 'ACTIVE')] }));
    // A second connection, as the writer thread has.
    db = openDatabase(file);
    repo = new TrialsRepo(db);
  });
  afterEach(async () => {
    db.close();
    await s.close();
  });

  it('a trial conflict in the middle leaves the commits before and after it written, and nothing of its own', async () => {
    const seq = async (id: string) => (await s.loadLoopState('default', id, { trialIds: [], knownRevision: null }))!.commitSeq;
    const bBefore = { seq: await seq('b'), study: await s.getStudy('default', 'b'), trials: (await s.listTrials('b', { after: null, limit: 10 })).items };
    const settled = repo.commitMany([
      { studyId: 'a', commit: commit({ trialUpdates: [change(1, 'REQUESTED', 'ACTIVE')], engineState: { version: 1, state: { g: 1 } }, generation: 1, newTrials: [newTrial(0.3)] }) },
      {
        studyId: 'b',
        // The first update holds (trial 2 is REQUESTED) and is applied before the second finds trial 1 ACTIVE.
        commit: commit({
          expectedCommitSeq: bBefore.seq,
          trialUpdates: [change(2, 'REQUESTED', 'COMPLETED', 0.5), change(1, 'REQUESTED', 'ACTIVE')],
          engineState: { version: 1, state: { g: 'x' } },
          generation: 1,
          newTrials: [newTrial(0.9)],
          evaluations: [{ index: 1, trialId: 2, value: 0.5, bestSoFar: 0.5, improved: true, completedAt: LATER }],
          studyState: { state: 'COMPLETED', reason: 'max_trials_reached' },
        }),
      },
      {
        studyId: 'c',
        commit: commit({
          expectedCommitSeq: await seq('c'),
          trialUpdates: [change(1, 'REQUESTED', 'COMPLETED', 2)],
          evaluations: [{ index: 1, trialId: 1, value: 2, bestSoFar: 2, improved: true, completedAt: LATER }],
        }),
      },
    ]);
    expect(settled).toEqual([
      { ok: true, result: { committed: true, revision: 2, trialIds: [3] } },
      { ok: true, result: { committed: false, reason: 'trial_conflict' } },
      { ok: true, result: { committed: true, revision: 1, trialIds: [] } },
    ]);

    // a and c: written.
    expect(await s.getEngineState('a')).toMatchObject({ generation: 1, revision: 2, state: { g: 1 } });
    expect((await s.listTrials('a', { after: null, limit: 10 })).items.map((t) => [t.trialId, t.state])).toEqual([[1, 'ACTIVE'], [2, 'REQUESTED'], [3, 'REQUESTED']]);
    expect(await s.getTrial('c', 1)).toMatchObject({ state: 'COMPLETED', value: 2, completedAt: LATER });
    expect(await s.listEvaluations('c', { afterIndex: 0, limit: 10 })).toEqual([{ index: 1, trialId: 1, value: 2, bestSoFar: 2, improved: true }]);

    // b: as before the group, its first update included; its commit count not advanced.
    expect(await s.getEngineState('b')).toMatchObject({ generation: 0, revision: 1, state: { g: 0 } });
    expect((await s.listTrials('b', { after: null, limit: 10 })).items).toEqual(bBefore.trials);
    expect(await s.getTrial('b', 3)).toBeNull();
    expect(await s.listEvaluations('b', { afterIndex: 0, limit: 10 })).toEqual([]);
    expect(await s.getStudy('default', 'b')).toEqual(bBefore.study);
    expect(await seq('b')).toBe(bBefore.seq);
  });

  it('the study\'s guards come before the trials\': a stale revision with a conflicting update is a revision_conflict, an unknown study study_not_found', () => {
    const settled = repo.commitMany([
      { studyId: 'b', commit: commit({ expectedRevision: 7, trialUpdates: [change(1, 'REQUESTED', 'ACTIVE')] }) },
      { studyId: 'nope', commit: commit({ trialUpdates: [change(1, 'REQUESTED', 'ACTIVE')] }) },
      // A trial that does not exist (the id the commit's own new trial will take) conflicts too.
      { studyId: 'a', commit: commit({ trialUpdates: [change(3, 'REQUESTED', 'ACTIVE')], newTrials: [newTrial(0.3)] }) },
    ]);
    expect(settled.map((x) => x.ok && x.result)).toEqual([
      { committed: false, reason: 'revision_conflict' },
      { committed: false, reason: 'study_not_found' },
      { committed: false, reason: 'trial_conflict' },
    ]);
  });

  it('a commit alone (its own transaction) that conflicts writes nothing either', async () => {
    const r = repo.commit('b', commit({ trialUpdates: [change(2, 'REQUESTED', 'ACTIVE'), change(1, 'REQUESTED', 'ACTIVE')], newTrials: [newTrial(0.9)] }));
    expect(r).toEqual({ committed: false, reason: 'trial_conflict' });
    expect(await s.getTrial('b', 2)).toMatchObject({ state: 'REQUESTED' });
    expect(await s.getTrial('b', 3)).toBeNull();
    expect(db.inTransaction).toBe(false);
  });
});
