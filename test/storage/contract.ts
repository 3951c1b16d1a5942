/**
 * The Storage contract, written once against the interface so that every backend (SQLite now,
 * PostgreSQL later) runs the same tests.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewStudyRecord, NewTrial, Storage } from '../../src/storage/index.js';
import { summariesContract } from './summaries-contract.js';
import { keysContract } from './keys-contract.js';
import { commitWithEvaluations } from '../helpers/evaluations.js';
import { importedEvaluations } from '../../src/domain/results/index.js';

export function study(id: string, tenantId = 'default', overrides: Partial<NewStudyRecord> = {}): NewStudyRecord {
  return {
    id,
    tenantId,
    name: `study ${id}`,
    direction: 'minimize',
    parameters: [{ name: 'x', type: 'float', scale: 'linear', bounds: [0, 1], prior: { mean: 0.5, std: 0.25 } }],
    prior: { mean: [0.5], covariance: [[0.0625]], std: [0.25] },
    method: 'cmaes',
    batchSize: 3,
    options: { sigma0: 1, active: true },
    seed: 7,
    maxTrials: null,
    leaseSeconds: 600,
    knownOptimum: null,
    metadata: { owner: 'team-a', nested: { list: [1, 2] } },
    state: 'ACTIVE',
    reason: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

const trial = (generation: number, x: number, extra: Partial<NewTrial> = {}): NewTrial => ({
  state: 'REQUESTED',
  generation,
  parameters: { x },
  point: [x * 2 - 1],
  source: 'suggested',
  ...extra,
});

/** The studies aggregate: create, read, list, change, delete. */
export function studiesContract(storage: () => Storage): void {
  describe('studies (StudiesStore)', () => {
    let s: Storage;
    beforeEach(() => {
      s = storage();
    });

      it('creates a study and reads it back with JSON fields and zero trial counts', async () => {
        const created = await s.createStudy(study('a'));
        expect(created).toMatchObject({ id: 'a', generation: 0, updatedAt: '2025-01-01T00:00:00.000Z', metadata: { owner: 'team-a', nested: { list: [1, 2] } } });
        expect(created.trialCounts).toEqual({ REQUESTED: 0, ACTIVE: 0, COMPLETED: 0, FAILED: 0, ABANDONED: 0 });
        expect(await s.getStudy('default', 'a')).toEqual(created);
      });

      it('hides other tenants\' studies', async () => {
        await s.createStudy(study('a'));
        expect(await s.getStudy('other', 'a')).toBeNull();
        expect((await s.listStudies('other', { after: null, limit: 10 })).items).toEqual([]);
        expect(await s.updateStudy('other', 'a', { name: 'x', updatedAt: '2025-01-02T00:00:00.000Z' })).toBeNull();
        expect(await s.deleteStudy('other', 'a')).toBe(false);
      });

      it('pages through studies oldest first, with a cursor only when more remain', async () => {
        for (const id of ['s1', 's2', 's3', 's4', 's5']) await s.createStudy(study(id));
        const ids: string[] = [];
        let after: string | null = null;
        let pages = 0;
        do {
          const page = await s.listStudies('default', { after, limit: 2 });
          ids.push(...page.items.map((x) => x.id));
          after = page.next;
          pages++;
        } while (after !== null);
        expect(ids).toEqual(['s1', 's2', 's3', 's4', 's5']);
        expect(pages).toBe(3);
        expect((await s.listStudies('default', { after: null, limit: 5 })).next).toBeNull();
      });

      it('updates only the given fields', async () => {
        await s.createStudy(study('a'));
        const u = await s.updateStudy('default', 'a', { state: 'PAUSED', reason: 'paused_by_client', updatedAt: '2025-01-02T00:00:00.000Z' });
        expect(u).toMatchObject({ name: 'study a', state: 'PAUSED', reason: 'paused_by_client', updatedAt: '2025-01-02T00:00:00.000Z', metadata: { owner: 'team-a' } });
        const v = await s.updateStudy('default', 'a', { name: 'renamed', metadata: {}, updatedAt: '2025-01-03T00:00:00.000Z' });
        expect(v).toMatchObject({ name: 'renamed', metadata: {}, state: 'PAUSED' });
      });

      it('deletes a study with its trials and engine states', async () => {
        await s.createStudy(study('a'));
        await s.commitGeneration('a', { expectedRevision: null, generation: 0, engineState: { version: 1, state: {} }, newTrials: [trial(0, 0.1)], now: '2025-01-01T00:00:01.000Z' });
        expect(await s.deleteStudy('default', 'a')).toBe(true);
        expect(await s.getStudy('default', 'a')).toBeNull();
        expect(await s.getTrial('a', 1)).toBeNull();
        expect(await s.getEngineState('a')).toBeNull();
        expect(await s.deleteStudy('default', 'a')).toBe(false);
      });
  });
}

/** The loop aggregate: its commit (guards, numbering, evaluation rows) and the trials it reads. */
export function loopContract(storage: () => Storage): void {
  describe('the loop (LoopStore)', () => {
    let s: Storage;
    beforeEach(() => {
      s = storage();
    });

      it('lists the completed trials after a position only while the trial there is the one the reader holds', async () => {
        await s.createStudy(study('a'));
        const done = (x: number, at: string): NewTrial => trial(0, x, { state: 'COMPLETED', value: x, completedAt: at });
        await commitWithEvaluations(s, 'a', { expectedRevision: null, generation: 0, engineState: { version: 1, state: {} }, newTrials: [done(0.1, '2025-01-01T00:00:01.000Z'), done(0.2, '2025-01-01T00:00:02.000Z'), done(0.3, '2025-01-01T00:00:03.000Z')], now: '2025-01-01T00:00:03.000Z' });
        const ids = async (position: number, at: number) => (await s.listCompletedTrialsAfter('a', position, at)).map((t) => t.trialId);
        expect(await ids(0, 0)).toEqual([1, 2, 3]);
        expect(await ids(2, 2)).toEqual([3]);
        expect(await ids(3, 3)).toEqual([]);
        // Not the trial at that position: nothing (the reader reads the whole list instead).
        expect(await ids(2, 1)).toEqual([]);
        // Trial 4 completed before trial 3 (an earlier clock): placed at position 3, trial 3 moves to 4.
        await commitWithEvaluations(s, 'a', { expectedRevision: 1, generation: 0, engineState: null, newTrials: [done(0.4, '2025-01-01T00:00:02.500Z')], now: '2025-01-01T00:00:04.000Z' });
        expect(await ids(3, 3)).toEqual([]);
        expect(await ids(2, 2)).toEqual([4, 3]);
        expect(await ids(4, 3)).toEqual([]);
        expect((await s.listCompletedTrialsAfter('a', 3, 4)).map((t) => [t.trialId, t.value])).toEqual([[3, 0.3]]);
        // Counted per insert (PostgreSQL: once per statement): three, one, then two more.
        await commitWithEvaluations(s, 'a', { expectedRevision: 1, generation: 0, engineState: null, newTrials: [done(0.5, '2025-01-01T00:00:05.000Z'), done(0.6, '2025-01-01T00:00:06.000Z')], now: '2025-01-01T00:00:06.000Z' });
        expect((await s.getStudy('default', 'a'))!.trialCounts.COMPLETED).toBe(6);
        expect(await ids(4, 3)).toEqual([5, 6]);
      });

      it('commits a generation atomically, numbering trials per study', async () => {
        await s.createStudy(study('a'));
        await s.createStudy(study('b'));
        const c1 = await s.commitGeneration('a', { expectedRevision: null, generation: 0, engineState: { version: 1, state: { mean: [0] } }, newTrials: [trial(0, 0.1), trial(0, 0.2)], now: '2025-01-01T00:00:01.000Z' });
        expect(c1.committed && c1.trialIds).toEqual([1, 2]);
        const c2 = await s.commitGeneration('b', { expectedRevision: null, generation: 0, engineState: { version: 1, state: {} }, newTrials: [trial(0, 0.3)], now: '2025-01-01T00:00:01.000Z' });
        expect(c2.committed && c2.trialIds).toEqual([1]);
        const c3 = await s.commitGeneration('a', { expectedRevision: 1, generation: 1, engineState: { version: 1, state: { mean: [0.5] } }, newTrials: [trial(1, 0.4, { state: 'ACTIVE', clientId: 'w1', leaseExpiresAt: '2025-01-01T00:10:00.000Z' })], now: '2025-01-01T00:00:02.000Z' });
        expect(c3).toEqual({ committed: true, revision: 2, trialIds: [3] });
        expect(await s.getTrial('a', 3)).toMatchObject({ trialId: 3, state: 'ACTIVE', clientId: 'w1', parameters: { x: 0.4 }, point: [-0.19999999999999996], source: 'suggested', value: null, createdAt: '2025-01-01T00:00:02.000Z' });
        const a = await s.getStudy('default', 'a');
        expect(a).toMatchObject({ generation: 1, updatedAt: '2025-01-01T00:00:02.000Z', trialCounts: { REQUESTED: 2, ACTIVE: 1, COMPLETED: 0 } });
        expect(await s.getEngineState('a')).toMatchObject({ generation: 1, revision: 2, version: 1, state: { mean: [0.5] } });
        expect(await s.getEngineState('a', 0)).toMatchObject({ generation: 0, revision: 1, state: { mean: [0] } });
        expect(await s.getEngineState('a', 7)).toBeNull();
      });

      it('refuses a commit computed from a stale revision and writes nothing', async () => {
        await s.createStudy(study('a'));
        const base = { generation: 0, engineState: { version: 1, state: {} }, now: '2025-01-01T00:00:01.000Z' };
        expect((await s.commitGeneration('a', { ...base, expectedRevision: null, newTrials: [trial(0, 0.1)] })).committed).toBe(true);
        expect(await s.commitGeneration('a', { ...base, expectedRevision: null, newTrials: [trial(0, 0.2)] })).toEqual({ committed: false, reason: 'revision_conflict' });
        expect(await s.commitGeneration('nope', { ...base, expectedRevision: null, newTrials: [] })).toEqual({ committed: false, reason: 'study_not_found' });
        expect((await s.getStudy('default', 'a'))!.trialCounts.REQUESTED).toBe(1);
      });

      it('writes the evaluation rows a commit carries only under its commit-count guard, and as given', async () => {
        await s.createStudy(study('a'));
        const base = { expectedRevision: null, generation: 0, engineState: { version: 1, state: {} }, now: '2025-01-02T00:00:01.000Z' };
        const done = trial(0, 0.1, { state: 'COMPLETED', value: 4, completedAt: '2025-01-02T00:00:01.000Z' });
        const row = { completedAt: '2025-01-02T00:00:01.000Z', index: 1, trialId: 1, value: 4, bestSoFar: 4, improved: true };
        // Rows computed from a state no check ties them to are refused (and nothing is written).
        await expect(s.commitGeneration('a', { ...base, newTrials: [done], evaluations: [row] })).rejects.toThrow();
        expect(await s.getTrial('a', 1)).toBeNull();
        const loaded = await s.loadLoopState('default', 'a', { trialIds: [], knownRevision: null });
        expect(loaded!.lastEvaluation).toBeNull();
        expect((await s.commitGeneration('a', { ...base, expectedCommitSeq: loaded!.commitSeq, newTrials: [done], evaluations: [row] })).committed).toBe(true);
        // The storage decides nothing: the rows read back are those written.
        expect(await s.listEvaluations('a', { afterIndex: 0, limit: 10 })).toEqual([{ index: 1, trialId: 1, value: 4, bestSoFar: 4, improved: true }]);
        expect((await s.loadLoopState('default', 'a', { trialIds: [], knownRevision: null }))!.lastEvaluation).toEqual(row);
        expect(await s.evaluationsAround('a', { completedAt: '2025-01-02T00:00:00.000Z', trialId: 9 })).toEqual({ before: null, after: [row] });
        expect(await s.evaluationsAround('a', { completedAt: '2025-01-02T00:00:01.000Z', trialId: 2 })).toEqual({ before: row, after: [] });
      });

      it('counts a study update as a commit: a loop commit read before a PATCH is refused', async () => {
        // A loop request reads the study (and its commit count), computes, then commits. A PATCH to
        // PAUSED in between must make that commit stale, or the request would hand out points of a
        // study the user has just paused.
        await s.createStudy(study('a'));
        const before = await s.loadLoopState('default', 'a', { trialIds: [], knownRevision: null });
        await s.updateStudy('default', 'a', { state: 'PAUSED', reason: 'paused_by_client', updatedAt: '2025-01-02T00:00:00.000Z' });
        const base = { generation: 0, engineState: { version: 1, state: {} }, now: '2025-01-02T00:00:01.000Z' };
        expect(await s.commitGeneration('a', { ...base, expectedRevision: null, expectedCommitSeq: before!.commitSeq, newTrials: [trial(0, 0.1)] })).toEqual({ committed: false, reason: 'revision_conflict' });
        expect((await s.getStudy('default', 'a'))!.trialCounts.REQUESTED).toBe(0);
        const after = await s.loadLoopState('default', 'a', { trialIds: [], knownRevision: null });
        expect((await s.commitGeneration('a', { ...base, expectedRevision: null, expectedCommitSeq: after!.commitSeq, newTrials: [trial(0, 0.1)] })).committed).toBe(true);
      });

      it('lists and reads trials, filtered by state and paged by trial id', async () => {
        await s.createStudy(study('a'));
        const newTrials = [trial(0, 0.1), trial(0, 0.2, { state: 'COMPLETED', value: 1.5, stderr: 0.1, completedAt: '2025-01-01T00:00:05.000Z' }), trial(0, 0.3), trial(0, 0.4)];
        await s.commitGeneration('a', { expectedRevision: null, generation: 0, engineState: { version: 1, state: {} }, newTrials, now: '2025-01-01T00:00:01.000Z' });
        const requested = await s.listTrials('a', { state: 'REQUESTED', after: null, limit: 2 });
        expect(requested.items.map((t) => t.trialId)).toEqual([1, 3]);
        expect((await s.listTrials('a', { state: 'REQUESTED', after: requested.next, limit: 2 })).items.map((t) => t.trialId)).toEqual([4]);
        expect(await s.getTrial('a', 2)).toMatchObject({ state: 'COMPLETED', value: 1.5, stderr: 0.1, completedAt: '2025-01-01T00:00:05.000Z' });
        expect(await s.getTrial('a', 99)).toBeNull();
      });
  });
}

/** Whole studies: every trial and engine state, export and import. */
export function reportsContract(storage: () => Storage): void {
  describe('whole studies (ReportsStore)', () => {
    let s: Storage;
    beforeEach(() => {
      s = storage();
    });

      it('lists all trials and engine states, and exports a study in one read', async () => {
        await s.createStudy(study('a'));
        await s.commitGeneration('a', { expectedRevision: null, generation: 0, engineState: { version: 1, state: { g: 0 } }, newTrials: [trial(0, 0.1), trial(0, 0.2)], now: '2025-01-01T00:00:01.000Z' });
        await s.commitGeneration('a', { expectedRevision: 1, generation: 1, engineState: { version: 1, state: { g: 1 } }, newTrials: [trial(1, 0.3, { state: 'COMPLETED', value: 2, completedAt: '2025-01-01T00:00:02.000Z' })], now: '2025-01-01T00:00:02.000Z' });
        expect((await s.listAllTrials('a')).map((t) => t.trialId)).toEqual([1, 2, 3]);
        expect((await s.listEngineStates('a')).map((e) => [e.generation, e.revision, e.state])).toEqual([[0, 1, { g: 0 }], [1, 2, { g: 1 }]]);
        expect(await s.listAllTrials('nope')).toEqual([]);
        const dump = await s.exportStudy('default', 'a');
        expect(dump?.study).toMatchObject({ id: 'a', generation: 1 });
        expect(dump?.trials).toHaveLength(3);
        expect(dump?.engineStates).toHaveLength(2);
        expect(await s.exportStudy('other', 'a')).toBeNull();
      });

      it('imports a study with its trials (ids kept) and engine states, continuing the trial numbering', async () => {
        await s.createStudy(study('a'));
        await s.commitGeneration('a', { expectedRevision: null, generation: 2, engineState: { version: 1, state: { g: 2 } }, newTrials: [trial(2, 0.1), trial(2, 0.2, { state: 'ACTIVE', clientId: 'w', leaseExpiresAt: '2025-01-01T01:00:00.000Z' })], now: '2025-01-01T00:00:01.000Z' });
        const src = (await s.exportStudy('default', 'a'))!;
        const copy = await s.importStudy({ ...study('b'), generation: 2, updatedAt: '2025-02-01T00:00:00.000Z' }, src.trials, src.engineStates, [], importedEvaluations(study('b'), src.trials));
        expect(copy).toMatchObject({ id: 'b', generation: 2, updatedAt: '2025-02-01T00:00:00.000Z', trialCounts: { REQUESTED: 1, ACTIVE: 1 } });
        const strip = <T extends { studyId: string }>(xs: T[]) => xs.map(({ studyId: _, ...rest }) => rest);
        expect(strip(await s.listAllTrials('b'))).toEqual(strip(src.trials));
        expect(strip(await s.listEngineStates('b'))).toEqual(strip(src.engineStates));
        // The commit count starts at the import's time in microseconds on both databases (commit-plan.ts
        // importedCommitSeq): a count cached for a deleted study of the same id can never match it.
        const before = Date.now() * 1000;
        const seq = (await s.loadLoopState('default', 'b', { trialIds: [], knownRevision: null }))!.commitSeq;
        expect(seq).toBeGreaterThan(before - 60e6);
        expect(seq).toBeLessThanOrEqual(Date.now() * 1000 + 1000);
        const next = await s.commitGeneration('b', { expectedRevision: 1, generation: 2, engineState: null, newTrials: [trial(2, 0.5)], now: '2025-02-01T00:00:01.000Z' });
        expect(next.committed && next.trialIds).toEqual([3]);
      });

      it('an import that fails part-way writes nothing', async () => {
        const states = [0, 0].map((generation, i) => ({ generation, revision: i + 1, version: 1, state: {}, createdAt: '2025-01-01T00:00:00.000Z' }));
        await expect(s.importStudy({ ...study('b'), generation: 0, updatedAt: '2025-01-01T00:00:00.000Z' }, [], states, [], [])).rejects.toThrow();
        expect(await s.getStudy('default', 'b')).toBeNull();
        expect(await s.listEngineStates('b')).toEqual([]);
      });
  });
}

/** Every aggregate's contract against one backend (`open` gives each test an empty database). */
export function storageContract(name: string, open: () => Promise<Storage>): void {
  describe(`Storage contract: ${name}`, () => {
    let s: Storage;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(async () => {
      await s.close();
    });

    it('reports itself healthy', async () => {
      const h = await s.health();
      expect(h.ok).toBe(true);
      expect(h.schemaVersion).toBe(h.expectedSchemaVersion);
    });

    studiesContract(() => s);
    loopContract(() => s);
    reportsContract(() => s);
    describe('summaries (SummariesStore)', () => summariesContract(() => s));
    keysContract(() => s);
  });
}
