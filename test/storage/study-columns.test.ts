/**
 * The one list of the studies table's columns (src/storage/study-columns.ts) against the schemas the
 * migrations build (SQLite and PostgreSQL: the same names, the declared types), and its mappings: a
 * study written through each backend's insert, and changed through its update, reads back as itself,
 * field for field, and through the storage (create, import, get, export, update) on both alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresStorage, SqliteStorage, TRIAL_STATES, type ImportedStudy, type JsonValue, type StudyPatch, type StudyRecord, type Storage, type TrialCounts } from '../../src/storage/index.js';
import { openDatabase } from '../../src/storage/sqlite/connection.js';
import { loadMigrations, migrate } from '../../src/storage/sqlite/migrate.js';
import { STUDY_COLUMNS, createdStudy, pgInsertStudy, pgStudyUpdate, sqliteInsertStudy, sqliteStudyUpdate, studyFromRow } from '../../src/storage/study-columns.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { study } from './contract.js';

const NO_TRIALS = Object.fromEntries(TRIAL_STATES.map((s) => [s, 0])) as TrialCounts;

/** Every field set to something a mix-up of two columns would show, in the order a read gives them. */
const RECORD: StudyRecord = {
  id: 's',
  tenantId: 'default',
  name: 'a study',
  direction: 'maximize',
  parameters: [{ name: 'x', type: 'float', bounds: [0, 1] }, { name: 'k', type: 'categorical', choices: ['a', 'b'] }],
  prior: { mean: [0.5], std: [0.25] },
  method: 'cmaes',
  batchSize: 5,
  options: { sigma0: 0.3, active: true },
  seed: 123456789012,
  maxTrials: 40,
  leaseSeconds: 90,
  knownOptimum: 0.1 + 0.2,
  metadata: { owner: 'team-b', nested: { list: [1, 2] } },
  state: 'PAUSED',
  reason: 'paused by hand',
  generation: 3,
  createdAt: '2025-01-01T00:00:01.000Z',
  updatedAt: '2025-01-01T00:00:02.000Z',
  loopSettings: { allow_repeats: true, stopping: { rule: 'median', min_steps: 2 } },
  outcomes: { objectives: [{ name: 'loss', direction: 'minimize' }, { name: 'time', direction: 'minimize' }], reference_point: [1, 2] },
  trialCounts: NO_TRIALS,
};
const { trialCounts: _, ...IMPORTED } = RECORD;
const imported: ImportedStudy = IMPORTED;

/** Every field a PATCH may change, each to a value the study did not have. */
const PATCH: Required<StudyPatch> = { name: 'renamed', metadata: { owner: 'team-c' }, state: 'ACTIVE', reason: null, updatedAt: '2025-01-01T00:00:09.000Z' };
const PATCHED: StudyRecord = { ...RECORD, ...PATCH };

const parsed = { json: (v: unknown) => v as JsonValue };
const fromText = { json: (v: unknown) => JSON.parse(v as string) as JsonValue };

describe('the studies columns (study-columns.ts)', () => {
  it('cover every field of a study record once, in the record read order', () => {
    // A row as a driver that returns JSON parsed would give it; the storage's own columns hold numbers.
    const row = Object.fromEntries(STUDY_COLUMNS.map((c) => [c.name, c.get ? c.get(imported) : 1]));
    const rec = studyFromRow(row, null, parsed);
    expect(rec).toEqual(RECORD);
    expect(Object.keys(rec)).toEqual(Object.keys(RECORD));
    expect(studyFromRow(row, { COMPLETED: 2, ACTIVE: 1 }, parsed).trialCounts).toEqual({ ...NO_TRIALS, COMPLETED: 2, ACTIVE: 1 });
  });

  it('read a row of a schema before a column was added, or with it NULL, as the record without it', () => {
    const row = Object.fromEntries(STUDY_COLUMNS.filter((c) => c.get).map((c) => [c.name, c.get!(imported)]));
    const { loop_settings: _l, outcomes: _o, ...before } = row;
    for (const r of [before, { ...before, loop_settings: null, outcomes: null }]) {
      const rec = studyFromRow(r, null, parsed);
      expect(rec).toEqual({ ...RECORD, loopSettings: {}, outcomes: null });
      // A fresh default at every read: the records share no object.
      expect(rec.loopSettings).not.toBe(studyFromRow(r, null, parsed).loopSettings);
    }
  });

  it('write a column added by a later migration only when the study has it', () => {
    const plain = createdStudy(study('p'));
    expect(sqliteInsertStudy(plain).sql).not.toMatch(/outcomes/);
    expect(pgInsertStudy(plain).text).not.toMatch(/outcomes/);
    expect(sqliteInsertStudy(imported).sql).toMatch(/outcomes/);
    expect(pgInsertStudy(imported).text).toMatch(/outcomes/);
    expect(createdStudy(study('p'))).toMatchObject({ generation: 0, updatedAt: study('p').createdAt });
  });

  it('are the SQLite schema after all migrations: names and declared types; a study reads back as itself, and as patched', () => {
    const db = openDatabase(':memory:');
    migrate(db, loadMigrations());
    const info = db.prepare<[], { name: string; type: string }>('PRAGMA table_info(studies)').all();
    expect(new Map(info.map((c) => [c.name, c.type]))).toEqual(new Map(STUDY_COLUMNS.map((c) => [c.name, c.sqlite])));
    const { sql, params } = sqliteInsertStudy(imported);
    db.prepare(sql).run(params);
    const read = () => studyFromRow(db.prepare('SELECT * FROM studies').get() as object, null, fromText);
    expect(read()).toEqual(RECORD);
    const update = sqliteStudyUpdate(PATCH);
    db.prepare(`UPDATE studies SET ${update.sets.join(', ')} WHERE id = @id`).run({ ...update.params, id: 's' });
    expect(read()).toEqual(PATCHED);
    db.close();
  });

  it('insert a study without the later columns on the schema before them (SQLite at version 9)', () => {
    const db = openDatabase(':memory:');
    migrate(db, loadMigrations().slice(0, 9));
    const { sql, params } = sqliteInsertStudy(createdStudy(study('p')));
    db.prepare(sql).run(params);
    expect(studyFromRow(db.prepare('SELECT * FROM studies').get() as object, null, fromText)).toEqual({ ...study('p'), generation: 0, updatedAt: study('p').createdAt, loopSettings: {}, outcomes: null, trialCounts: NO_TRIALS });
    db.close();
  });

  /** Create, import, get, list, export and update through the storage. */
  async function throughTheStorage(s: Storage): Promise<void> {
    await s.importStudy(imported, [], [], [], []);
    expect(await s.getStudy('default', 's')).toEqual(RECORD);
    expect((await s.exportStudy('default', 's'))!.study).toEqual(RECORD);
    const created = await s.createStudy(study('c'), { version: 1, state: {} });
    const asCreated = { ...study('c'), generation: 0, updatedAt: study('c').createdAt, loopSettings: {}, outcomes: null, trialCounts: NO_TRIALS };
    expect(created).toEqual(asCreated);
    expect((await s.listStudies('default', { after: null, limit: 10 })).items).toEqual([RECORD, asCreated]);
    expect(await s.updateStudy('default', 's', PATCH)).toEqual(PATCHED);
    expect(await s.updateStudy('default', 'c', { updatedAt: PATCH.updatedAt })).toEqual({ ...asCreated, updatedAt: PATCH.updatedAt });
    expect(await s.getStudy('default', 's')).toEqual(PATCHED);
  }

  it('through the SQLite storage: create, import, get, list, export and update', async () => {
    const s = SqliteStorage.open(':memory:');
    try {
      await throughTheStorage(s);
    } finally {
      await s.close();
    }
  });

  const server = postgresServer();
  describe.skipIf(!server)('PostgreSQL', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(server!, 'probnes_studycols');
      // Migrated by the storage, as a replica would.
      await (await PostgresStorage.open({ url: db.url, poolSize: 1 })).close();
    });
    afterAll(async () => {
      await db.drop();
    });

    it('are the PostgreSQL schema after all migrations: names and types; a study reads back as itself, and as patched', async () => {
      // bigint read as a number, as the storage's pool reads it (postgres/connection.ts).
      const types = { getTypeParser: ((oid: number, format: 'text') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser };
      const c = new pg.Client({ connectionString: db.url, types });
      await c.connect();
      try {
        const info = (await c.query<{ column_name: string; data_type: string }>("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'studies'")).rows;
        expect(new Map(info.map((r) => [r.column_name, r.data_type]))).toEqual(new Map(STUDY_COLUMNS.map((col) => [col.name, col.postgres])));
        const insert = pgInsertStudy(imported);
        await c.query(insert.text, insert.values);
        const read = async () => studyFromRow((await c.query('SELECT * FROM studies')).rows[0] as object, null, parsed);
        expect(await read()).toEqual(RECORD);
        const values: unknown[] = ['s'];
        const sets = pgStudyUpdate(PATCH, values);
        await c.query(`UPDATE studies SET ${sets.join(', ')} WHERE id = $1`, values);
        expect(await read()).toEqual(PATCHED);
        await c.query('DELETE FROM studies');
      } finally {
        await c.end();
      }
    });

    it('through the PostgreSQL storage: create, import, get, list, export and update, as on SQLite', async () => {
      const s = await PostgresStorage.open({ url: db.url, poolSize: 1 });
      try {
        await throughTheStorage(s);
      } finally {
        await s.close();
      }
    });
  });
});
