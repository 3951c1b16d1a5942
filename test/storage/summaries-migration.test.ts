/**
 * Migration SQLite 006 / PostgreSQL 005 backfills the evaluations of studies that existed before it:
 * a database at the previous version with completed trials (ties in value and in time, both
 * directions, trials that do not count) reads, after migrating, exactly the evaluations the
 * definition gives (expectedEvaluations), and new completions then extend them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, loadPostgresMigrations, PostgresStorage, SqliteStorage, type Storage } from '../../src/storage/index.js';
import { migrate } from '../../src/storage/sqlite/migrate.js';
import { migratePostgres } from '../../src/storage/postgres/migrate.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { expectedEvaluations } from './summaries-contract.js';
import { commitWithEvaluations } from '../helpers/evaluations.js';

const BEFORE_SQLITE = 5;
const BEFORE_POSTGRES = 4;

const rows = [
  // study, trial, state, value, completed_at
  ['lo', 1, 'COMPLETED', 3, '2025-01-01T00:00:02.000Z'],
  ['lo', 2, 'COMPLETED', 1, '2025-01-01T00:00:03.000Z'],
  ['lo', 3, 'COMPLETED', 1, '2025-01-01T00:00:01.000Z'],
  ['lo', 4, 'FAILED', null, '2025-01-01T00:00:00.500Z'],
  ['lo', 5, 'COMPLETED', 0.5, '2025-01-01T00:00:03.000Z'],
  ['lo', 6, 'ACTIVE', null, null],
  ['hi', 1, 'COMPLETED', 3, '2025-01-01T00:00:02.000Z'],
  ['hi', 2, 'COMPLETED', 7, '2025-01-01T00:00:01.000Z'],
  ['hi', 3, 'COMPLETED', 7, '2025-01-01T00:00:00.000Z'],
  ['hi', 4, 'COMPLETED', 9, '2025-01-01T00:00:05.000Z'],
] as const;

const expected = (studyId: 'lo' | 'hi') =>
  expectedEvaluations(
    rows.filter((r) => r[0] === studyId && r[2] === 'COMPLETED').map((r) => ({ trialId: r[1], value: r[3] as number, completedAt: r[4] as string })),
    studyId === 'lo' ? 'minimize' : 'maximize',
  );

const STUDY_SQL = (p: (i: number) => string) =>
  `INSERT INTO studies (id, tenant_id, name, direction, parameters, prior, method, batch_size, options, seed, lease_seconds, metadata, state, next_trial_id, created_at, updated_at)
   VALUES (${p(1)}, 'default', ${p(2)}, ${p(3)}, '[]', '{}', 'random', 1, '{}', 1, 60, '{}', 'ACTIVE', 7, 'x', 'x')`;
const TRIAL_SQL = (p: (i: number) => string) =>
  `INSERT INTO trials (study_id, trial_id, state, generation, parameters, value, source, created_at, completed_at, updated_at)
   VALUES (${p(1)}, ${p(2)}, ${p(3)}, 0, '{}', ${p(4)}, 'suggested', 'x', ${p(5)}, 'x')`;

async function checkAfter(s: Storage) {
  for (const id of ['lo', 'hi'] as const) {
    expect(await s.listEvaluations(id, { afterIndex: 0, limit: 100 })).toEqual(expected(id));
    const steps = expected(id).filter((e) => e.improved);
    expect(await s.evaluationSummary(id)).toEqual({ count: expected(id).length, best: steps[steps.length - 1] });
  }
  // The loop's rows extend the backfill: a new completion lands after the backfilled ones.
  const head = await s.getEngineState('lo');
  const res = await commitWithEvaluations(s, 'lo', {
    expectedRevision: head?.revision ?? null,
    generation: 0,
    engineState: null,
    newTrials: [{ state: 'COMPLETED', generation: 0, parameters: {}, point: null, source: 'external', value: 0.25, completedAt: '2025-01-01T00:00:09.000Z' }],
    now: '2025-01-01T00:00:09.000Z',
  });
  expect(res.committed).toBe(true);
  expect(await s.evaluationSummary('lo')).toMatchObject({ count: 5, best: { index: 5, trialId: 7, value: 0.25, bestSoFar: 0.25, improved: true } });
}

describe('migration 006 (SQLite): evaluations backfilled', () => {
  it('a database at version 5 with results reads them after migrating', async () => {
    const all = loadMigrations();
    const db = new Database(':memory:');
    migrate(db, all.slice(0, BEFORE_SQLITE));
    for (const [id, dir] of [['lo', 'minimize'], ['hi', 'maximize']]) db.prepare(STUDY_SQL(() => '?')).run(id, id, dir);
    for (const r of rows) db.prepare(TRIAL_SQL(() => '?')).run(...r);
    migrate(db, all);
    // Read through the storage: a copy of this in-memory database as a file.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-summaries-'));
    const file = path.join(dir, 'p.db');
    await db.backup(file);
    db.close();
    const s = SqliteStorage.open(file, { writerThread: false });
    try {
      await checkAfter(s);
    } finally {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const server = postgresServer();

describe.skipIf(!server)('migration 005 (PostgreSQL): evaluations backfilled', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase(server!, 'probnes_summ');
  });
  afterAll(async () => {
    await tdb?.drop();
  });

  it('a database at version 4 with results reads them after migrating', async () => {
    const pool = new pg.Pool({ connectionString: tdb.url, max: 1 });
    try {
      await migratePostgres(pool, loadPostgresMigrations().slice(0, BEFORE_POSTGRES));
      for (const [id, dir] of [['lo', 'minimize'], ['hi', 'maximize']]) await pool.query(STUDY_SQL((i) => `$${i}`), [id, id, dir]);
      for (const r of rows) await pool.query(TRIAL_SQL((i) => `$${i}`), [...r]);
    } finally {
      await pool.end();
    }
    const s = await PostgresStorage.open({ url: tdb.url, poolSize: 2 });
    try {
      await checkAfter(s);
    } finally {
      await s.close();
    }
  });
});
