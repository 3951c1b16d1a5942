/**
 * The one list of the trials table's columns (src/storage/trial-columns.ts) against the schemas the
 * migrations build (SQLite and PostgreSQL: the same names, the declared types), and its mappings:
 * a record written through each backend's insert reads back as itself, field for field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresStorage, SqliteStorage, type JsonValue, type TrialRecord } from '../../src/storage/index.js';
import { openDatabase } from '../../src/storage/sqlite/connection.js';
import { loadMigrations, migrate } from '../../src/storage/sqlite/migrate.js';
import { OUTCOME_FIELDS, SQLITE_INSERT_TRIAL, TRIAL_COLUMNS, pgInsertTrials, pgTrial, sqliteTrial, trialFromRow } from '../../src/storage/trial-columns.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { study } from './contract.js';

/** Every field set to something a mix-up of two columns would show. */
const RECORD: TrialRecord = {
  studyId: 's',
  trialId: 4,
  state: 'COMPLETED',
  generation: 2,
  clientId: 'worker-1',
  leaseExpiresAt: '2025-01-01T00:10:00.000Z',
  parameters: { x: 0.25, kind: 'b', on: true },
  point: [0.5, -1.25],
  value: 0.1 + 0.2,
  stderr: 0.07,
  failureReason: 'late',
  late: true,
  source: 'suggested',
  createdAt: '2025-01-01T00:00:01.000Z',
  completedAt: '2025-01-01T00:00:02.000Z',
  updatedAt: '2025-01-01T00:00:03.000Z',
};

describe('the trials columns (trial-columns.ts)', () => {
  it('cover every field of a trial record once, with the outcome fields in the outcome column', () => {
    // A row as a driver that returns JSON parsed and booleans as booleans would give it.
    const row = Object.fromEntries(TRIAL_COLUMNS.map((c) => [c.name, c.get(RECORD)]));
    const rec = trialFromRow(row, { json: (v: JsonValue) => v, bool: (v: boolean) => v });
    expect(rec).toEqual(RECORD);
    expect(Object.keys(rec)).toEqual(Object.keys(RECORD));
    expect(TRIAL_COLUMNS.find((c) => c.name === 'outcome')!.get(RECORD)).toEqual(Object.fromEntries(OUTCOME_FIELDS.map((f) => [f, RECORD[f]])));
  });

  it('are the SQLite schema after all migrations: names and declared types', () => {
    const db = openDatabase(':memory:');
    migrate(db, loadMigrations());
    const info = db.prepare<[], { name: string; type: string }>('PRAGMA table_info(trials)').all();
    expect(new Map(info.map((c) => [c.name, c.type]))).toEqual(new Map(TRIAL_COLUMNS.map((c) => [c.name, c.sqlite])));
    db.prepare('INSERT INTO studies (id, tenant_id, name, direction, parameters, prior, method, batch_size, options, seed, lease_seconds, metadata, state, created_at, updated_at) VALUES (\'s\', \'default\', \'s\', \'minimize\', \'[]\', \'{}\', \'random\', 1, \'{}\', 1, 60, \'{}\', \'ACTIVE\', \'x\', \'x\')').run();
    db.prepare(SQLITE_INSERT_TRIAL).run(sqliteTrial(RECORD));
    const row = db.prepare('SELECT * FROM trials').get() as Record<string, unknown>;
    expect(trialFromRow(row, { json: (v: string) => JSON.parse(v), bool: (v: number) => v === 1 })).toEqual(RECORD);
    db.close();
  });

  const server = postgresServer();
  describe.skipIf(!server)('PostgreSQL', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(server!, 'probnes_cols');
      // Migrated by the storage, as a replica would.
      const s = await PostgresStorage.open({ url: db.url, poolSize: 1 });
      await s.createStudy(study('s'));
      await s.close();
    });
    afterAll(async () => {
      await db.drop();
    });

    it('are the PostgreSQL schema after all migrations: names and types, and a record reads back as itself', async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const info = (await c.query<{ column_name: string; data_type: string }>("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'trials'")).rows;
        expect(new Map(info.map((r) => [r.column_name, r.data_type]))).toEqual(new Map(TRIAL_COLUMNS.map((col) => [col.name, col.postgres])));
        await c.query(pgInsertTrials('$1'), [JSON.stringify([pgTrial(RECORD)])]);
        const row = (await c.query('SELECT * FROM trials')).rows[0] as Record<string, unknown>;
        expect(trialFromRow(row, { json: (v: JsonValue) => v, bool: (v: boolean) => v })).toEqual(RECORD);
      } finally {
        await c.end();
      }
    });

    it('the storage reads what the commit and the import wrote, on both backends alike', async () => {
      const s = await PostgresStorage.open({ url: db.url, poolSize: 1 });
      const q = SqliteStorage.open(':memory:');
      try {
        expect(await s.getTrial('s', 4)).toEqual(RECORD);
        await q.createStudy(study('s'));
        const { studyId: _, ...imported } = RECORD;
        const copy = await q.importStudy({ ...study('s2'), generation: 2, updatedAt: RECORD.updatedAt }, [imported], [], [], []);
        expect(await q.getTrial(copy.id, 4)).toEqual({ ...RECORD, studyId: 's2' });
      } finally {
        await Promise.all([s.close(), q.close()]);
      }
    });
  });
});
