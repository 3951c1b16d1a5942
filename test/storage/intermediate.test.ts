/**
 * Intermediate values (early stopping) and a study's loop settings, on both backends: one value per
 * trial and step that a second report never overwrites, the peers a stopping rule reads at a step,
 * and both carried by export and import. Run, as the storage contract is, against SQLite in memory,
 * SQLite with its writer thread (a database file) and PostgreSQL.
 */
import { importedEvaluations } from '../../src/domain/results/index.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PostgresStorage, SqliteStorage, type Storage } from '../../src/storage/index.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { study } from './contract.js';

const NOW = '2025-01-01T00:00:00.000Z';

function intermediateContract(name: string, open: () => Promise<Storage>): void {
  describe(`intermediate values: ${name}`, () => {
    let s: Storage;
    beforeEach(async () => {
      s = await open();
      await s.createStudy(study('a', 'default', { loopSettings: { allow_repeats: true, stopping: { rule: 'median', min_steps: 2, warmup_trials: 3 } } }));
      const res = await s.commitGeneration('a', {
        expectedRevision: null,
        generation: 0,
        engineState: null,
        newTrials: [
          { state: 'COMPLETED', generation: 0, parameters: { x: 0.1 }, point: [0], source: 'suggested', value: 1, completedAt: NOW },
          { state: 'COMPLETED', generation: 0, parameters: { x: 0.2 }, point: [0], source: 'suggested', value: 2, completedAt: NOW },
          { state: 'ACTIVE', generation: 0, parameters: { x: 0.3 }, point: [0], source: 'suggested', clientId: 'w', leaseExpiresAt: NOW },
        ],
        now: NOW,
      });
      expect(res.committed).toBe(true);
    });
    afterEach(async () => {
      await s.close();
    });

    it('keeps the loop settings a study was created with', async () => {
      expect((await s.getStudy('default', 'a'))!.loopSettings).toEqual({ allow_repeats: true, stopping: { rule: 'median', min_steps: 2, warmup_trials: 3 } });
      await s.createStudy(study('plain'));
      expect((await s.getStudy('default', 'plain'))!.loopSettings).toEqual({});
    });

    it('stores one value per trial and step and answers a second report with the first', async () => {
      expect(await s.recordIntermediate('a', { trialId: 3, step: 1, value: 0.5, createdAt: NOW })).toEqual({ inserted: true, record: { trialId: 3, step: 1, value: 0.5, createdAt: NOW } });
      const again = await s.recordIntermediate('a', { trialId: 3, step: 1, value: 0.7, createdAt: '2025-01-02T00:00:00.000Z' });
      expect(again).toEqual({ inserted: false, record: { trialId: 3, step: 1, value: 0.5, createdAt: NOW } });
      await s.recordIntermediate('a', { trialId: 3, step: 0, value: 0.9, createdAt: NOW });
      await s.recordIntermediate('a', { trialId: 1, step: 1, value: 0.4, createdAt: NOW });
      expect((await s.listIntermediate('a')).map((r) => [r.trialId, r.step, r.value])).toEqual([[1, 1, 0.4], [3, 0, 0.9], [3, 1, 0.5]]);
      expect((await s.listIntermediate('a', [3])).map((r) => r.step)).toEqual([0, 1]);
      expect(await s.listIntermediate('a', [])).toEqual([]);
    });

    it('refuses a value for a trial that does not exist', async () => {
      await expect(s.recordIntermediate('a', { trialId: 99, step: 0, value: 1, createdAt: NOW })).rejects.toThrow();
    });

    it('lists the completed trials that reported a value at one step', async () => {
      await s.recordIntermediate('a', { trialId: 1, step: 4, value: 0.25, createdAt: NOW });
      await s.recordIntermediate('a', { trialId: 1, step: 5, value: 0.2, createdAt: NOW });
      await s.recordIntermediate('a', { trialId: 3, step: 4, value: 0.75, createdAt: NOW });
      // Trial 2 completed without reporting step 4; trial 3 reported it but is still ACTIVE.
      expect(await s.stepPeers('a', 4)).toEqual([{ trialId: 1, failureReason: null, value: 0.25 }]);
      expect(await s.stepPeers('a', 6)).toEqual([]);
    });

    it('counts the completed trials other than those with a failure reason, up to a bound', async () => {
      // Trials 1 and 2 are COMPLETED with no failure reason; 3 is ACTIVE.
      expect(await s.countCompleted('a', { exceptFailureReason: 'stopped_early', atMost: 5 })).toBe(2);
      expect(await s.countCompleted('a', { exceptFailureReason: 'stopped_early', atMost: 1 })).toBe(1);
      expect(await s.countCompleted('a', { exceptFailureReason: 'stopped_early', atMost: 0 })).toBe(0);
    });

    it('pages the values in (trial id, step) order from a cursor, and aggregates a trial\'s range through a step', async () => {
      for (const [trialId, step, value] of [[3, 0, 0.9], [1, 2, 0.4], [1, 0, 0.6], [3, 7, 0.1], [2, 1, 0.5]] as const) await s.recordIntermediate('a', { trialId, step, value, createdAt: NOW });
      const key = (r: { trialId: number; step: number }) => [r.trialId, r.step];
      expect((await s.listIntermediatePage('a', { after: null, limit: 10 })).map(key)).toEqual([[1, 0], [1, 2], [2, 1], [3, 0], [3, 7]]);
      expect((await s.listIntermediatePage('a', { after: null, limit: 2 })).map(key)).toEqual([[1, 0], [1, 2]]);
      // Inside a trial's curve, and across to the next trial.
      expect((await s.listIntermediatePage('a', { after: { trialId: 1, step: 0 }, limit: 2 })).map(key)).toEqual([[1, 2], [2, 1]]);
      expect((await s.listIntermediatePage('a', { after: { trialId: 3, step: 0 }, limit: 5 })).map(key)).toEqual([[3, 7]]);
      expect(await s.listIntermediatePage('a', { after: { trialId: 3, step: 7 }, limit: 5 })).toEqual([]);
      expect(await s.listIntermediatePage('other', { after: null, limit: 5 })).toEqual([]);
      expect(await s.intermediateRange('a', 1, 1)).toEqual({ min: 0.6, max: 0.6 });
      expect(await s.intermediateRange('a', 1, 2)).toEqual({ min: 0.4, max: 0.6 });
      expect(await s.intermediateRange('a', 3, 6)).toEqual({ min: 0.9, max: 0.9 });
      expect(await s.intermediateRange('a', 2, 0)).toBeNull();
    });

    it('exports the values and imports them with the copy; deleting the study deletes them', async () => {
      await s.recordIntermediate('a', { trialId: 1, step: 4, value: 0.25, createdAt: NOW });
      const dump = (await s.exportStudy('default', 'a'))!;
      expect(dump.intermediate).toEqual([{ trialId: 1, step: 4, value: 0.25, createdAt: NOW }]);
      await s.importStudy({ ...study('b', 'default', { loopSettings: dump.study.loopSettings }), generation: 0, updatedAt: NOW }, dump.trials.map(({ studyId: _, ...t }) => t), [], dump.intermediate, importedEvaluations(dump.study, dump.trials));
      expect(await s.listIntermediate('b')).toEqual(dump.intermediate);
      expect((await s.getStudy('default', 'b'))!.loopSettings).toEqual(dump.study.loopSettings);
      expect(await s.deleteStudy('default', 'a')).toBe(true);
      expect(await s.listIntermediate('a')).toEqual([]);
    });
  });
}

intermediateContract('SQLite in memory', async () => SqliteStorage.open(':memory:'));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-intermediate-'));
let files = 0;
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
intermediateContract('SQLite file, commits on the writer thread', async () => SqliteStorage.open(path.join(dir, `i${++files}.db`), { writerThread: true }));

const server = postgresServer();
describe.skipIf(!server)('PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(server!, 'probnes_intermediate');
  });
  afterAll(async () => {
    await db?.drop();
  });
  intermediateContract('PostgreSQL', async () => {
    const s = await PostgresStorage.open({ url: db.url, poolSize: 2 });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query('DELETE FROM studies');
    await c.end();
    return s;
  });
});
