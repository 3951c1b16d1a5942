/**
 * The loop's commits on the writer thread (a database file): the whole Storage contract, then what
 * is particular to the thread: commits queued together (several studies) each keep their own
 * outcome, every promise resolves only once its write is readable by the main connection, and
 * trial counts (kept by triggers since migration 003) follow every write path.
 */
import { importedEvaluations } from '../../src/domain/results/index.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage, type GenerationCommit, type TrialUpdate } from '../../src/storage/index.js';
import { CommitThread, WRITER_THREAD_YOUNG_GENERATION_MB } from '../../src/storage/sqlite/commit-thread.js';
import { storageContract, study } from './contract.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-writer-'));
let n = 0;
const file = () => path.join(dir, `w${++n}.db`);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

storageContract('SQLite file, commits on the writer thread', async () => SqliteStorage.open(file(), { writerThread: true }));

const NOW = '2025-01-01T00:00:01.000Z';
const newTrial = (x: number) => ({ state: 'REQUESTED' as const, generation: 0, parameters: { x }, point: [x], source: 'suggested' as const });
const complete = (trialId: number, value: number, expectedState: TrialUpdate['expectedState'] = 'REQUESTED'): TrialUpdate => ({
  trialId, expectedState, state: 'COMPLETED', clientId: null, leaseExpiresAt: null, value, stderr: null, failureReason: null, late: false, completedAt: NOW,
});
const commit = (c: Partial<GenerationCommit>): GenerationCommit => ({ expectedRevision: 1, generation: 0, engineState: null, newTrials: [], now: NOW, ...c });

describe('writer thread', () => {
  let s: SqliteStorage;
  let dbFile: string;
  beforeEach(async () => {
    dbFile = file();
    s = SqliteStorage.open(dbFile, { writerThread: true });
    for (const id of ['a', 'b', 'c']) await s.createStudy(study(id), { version: 1, state: {} });
  });
  afterEach(async () => {
    await s.close();
  });

  it('commits sent together keep their own outcomes: a stale revision and a trial conflict change nothing of the others', async () => {
    await s.commitGeneration('c', commit({ newTrials: [newTrial(0.5)] }));
    const [a, b, stale, conflict] = await Promise.all([
      s.commitGeneration('a', commit({ newTrials: [newTrial(0.1), newTrial(0.2)] })),
      s.commitGeneration('b', commit({ newTrials: [newTrial(0.3)], engineState: { version: 1, state: { g: 1 } }, generation: 1 })),
      s.commitGeneration('a', commit({ expectedRevision: 7, newTrials: [newTrial(0.9)] })),
      // Trial 1 of c is REQUESTED, not ACTIVE: the guard fails and the new trial goes too.
      s.commitGeneration('c', commit({ trialUpdates: [complete(1, 3, 'ACTIVE')], newTrials: [newTrial(0.6)] })),
    ]);
    expect(a).toMatchObject({ committed: true, revision: 1 });
    expect(a.committed && a.trialIds).toEqual([1, 2]);
    expect(b).toMatchObject({ committed: true, revision: 2 });
    expect(stale).toEqual({ committed: false, reason: 'revision_conflict' });
    expect(conflict).toEqual({ committed: false, reason: 'trial_conflict' });
    expect((await s.listTrials('c', { after: null, limit: 10 })).items.map((t) => [t.trialId, t.state])).toEqual([[1, 'REQUESTED']]);
    expect((await s.getStudy('default', 'a'))!.trialCounts.REQUESTED).toBe(2);
    expect((await s.getEngineState('b'))!.state).toEqual({ g: 1 });
  });

  it('a resolved commit is already on disk: another connection reads it at once', async () => {
    await s.commitGeneration('a', commit({ newTrials: [newTrial(0.1)] }));
    const raw = new Database(dbFile, { readonly: true });
    try {
      expect(raw.prepare("SELECT COUNT(*) FROM trials WHERE study_id = 'a'").pluck().get()).toBe(1);
    } finally {
      raw.close();
    }
  });

  it('trial counts follow inserts, state changes, imports and deletion (triggers, checked against a GROUP BY)', async () => {
    await s.commitGeneration('a', commit({ newTrials: [newTrial(0.1), newTrial(0.2), newTrial(0.3)] }));
    await s.commitGeneration('a', commit({ trialUpdates: [complete(1, 1), complete(3, 2)] }));
    const src = (await s.exportStudy('default', 'a'))!;
    await s.importStudy({ ...study('copy'), generation: 0, updatedAt: NOW }, src.trials, src.engineStates, [], importedEvaluations(study('copy'), src.trials));
    await s.deleteStudy('default', 'b');
    const raw = new Database(dbFile, { readonly: true });
    try {
      const counted = raw.prepare('SELECT study_id, state, COUNT(*) AS n FROM trials GROUP BY study_id, state ORDER BY 1, 2').all();
      const kept = raw.prepare('SELECT study_id, state, n FROM study_trial_counts WHERE n > 0 ORDER BY 1, 2').all();
      expect(kept).toEqual(counted);
      expect(raw.prepare("SELECT COUNT(*) FROM study_trial_counts WHERE study_id = 'b'").pluck().get()).toBe(0);
    } finally {
      raw.close();
    }
    expect((await s.getStudy('default', 'a'))!.trialCounts).toEqual({ REQUESTED: 1, ACTIVE: 0, COMPLETED: 2, FAILED: 0, ABANDONED: 0 });
  });

  it('close lets queued commits finish, and leaves one file without a WAL', async () => {
    const pending = s.commitGeneration('a', commit({ newTrials: [newTrial(0.1)] }));
    await s.close();
    expect((await pending).committed).toBe(true);
    expect(fs.existsSync(`${dbFile}-wal`) ? fs.statSync(`${dbFile}-wal`).size : 0).toBe(0);
    s = SqliteStorage.open(dbFile, { writerThread: true });
    expect((await s.getStudy('default', 'a'))!.trialCounts.REQUESTED).toBe(1);
  });

  it('once closed, a commit is refused instead of starting another thread', async () => {
    await s.close();
    await expect(s.commitGeneration('a', commit({ newTrials: [newTrial(0.1)] }))).rejects.toThrow(/closed/);
    expect((await s.health()).ok).toBe(false);
    s = SqliteStorage.open(dbFile, { writerThread: true });
  });
});

describe('writer thread memory', () => {
  it('runs with the young generation limited to WRITER_THREAD_YOUNG_GENERATION_MB', async () => {
    const f = file();
    await SqliteStorage.open(f).close();
    const thread = new CommitThread(f);
    try {
      await thread.ready();
      expect(thread.threadLimits().maxYoungGenerationSizeMb).toBe(WRITER_THREAD_YOUNG_GENERATION_MB);
    } finally {
      await thread.close();
    }
  });
});
