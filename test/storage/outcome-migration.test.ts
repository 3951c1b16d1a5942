/**
 * Migration 009 (SQLite and PostgreSQL): a trial's value and standard error move from two REAL /
 * float8 columns into the JSON column `outcome`. A database at version 8 with trials of every kind
 * (value and stderr, value alone, neither, doubles whose shortest text is 17 digits, the smallest
 * subnormal, the extremes of the range) reads, after migrating, exactly the records that version
 * 8's reader made of its rows (the expected records are built from the raw rows as that reader
 * did), in listings and in an export; a trial without a result has no outcome; and PostgreSQL has
 * no commit function left.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, loadPostgresMigrations, PostgresStorage, SqliteStorage, type Storage, type TrialRecord } from '../../src/storage/index.js';
import { openDatabase } from '../../src/storage/sqlite/connection.js';
import { migrate } from '../../src/storage/sqlite/migrate.js';
import { migratePostgres } from '../../src/storage/postgres/migrate.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';

const BEFORE = 8;
const AT = '2025-01-01T00:00:01.000Z';

/** [trial id, state, value, stderr, failure reason, late]: every combination a stored trial can hold. */
const TRIALS = [
  [1, 'COMPLETED', 3, null, null, false],
  [2, 'COMPLETED', 0.1 + 0.2, 0.05, null, false],
  [3, 'REQUESTED', null, null, null, false],
  [4, 'FAILED', null, null, 'diverged', false],
  [5, 'COMPLETED', 1 / 3, 1e-300, null, true],
  [6, 'COMPLETED', -1.7976931348623157e308, 5e-324, null, false],
  [7, 'COMPLETED', 123456789.12345678, 0, null, false],
  [8, 'COMPLETED', -2.5e-8, null, 'x', false],
] as const;

const STUDY_SQL = (p: (i: number) => string) =>
  `INSERT INTO studies (id, tenant_id, name, direction, parameters, prior, method, batch_size, options, seed, lease_seconds, metadata, state, next_trial_id, created_at, updated_at)
   VALUES (${p(1)}, 'default', 'o', 'minimize', '[]', '{}', 'random', 1, '{}', 1, 60, '{}', 'ACTIVE', 9, '${AT}', '${AT}')`;
const TRIAL_SQL = (p: (i: number) => string) =>
  `INSERT INTO trials (study_id, trial_id, state, generation, parameters, point, value, stderr, failure_reason, late, source, created_at, completed_at, updated_at)
   VALUES (${p(1)}, ${p(2)}, ${p(3)}, 0, '{"x":0.25}', '[0.5]', ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, 'external', '${AT}', ${p(8)}, '${AT}')`;
const trialValues = (t: (typeof TRIALS)[number], late: (b: boolean) => unknown) => ['o', t[0], t[1], t[2], t[3], t[4], late(t[5]), t[1] === 'COMPLETED' ? AT : null];

/** A version-8 row as version 8's reader (src/storage/rows.ts then) made it a record. */
function v8Record(r: Record<string, unknown>, json: (v: unknown) => unknown, bool: (v: unknown) => boolean): TrialRecord {
  return {
    studyId: r.study_id as string,
    trialId: r.trial_id as number,
    state: r.state as TrialRecord['state'],
    generation: r.generation as number,
    clientId: r.client_id as string | null,
    leaseExpiresAt: r.lease_expires_at as string | null,
    parameters: json(r.parameters) as TrialRecord['parameters'],
    point: r.point === null ? null : (json(r.point) as number[]),
    value: r.value as number | null,
    stderr: r.stderr as number | null,
    failureReason: r.failure_reason as string | null,
    late: bool(r.late),
    source: r.source as TrialRecord['source'],
    createdAt: r.created_at as string,
    completedAt: r.completed_at as string | null,
    updatedAt: r.updated_at as string,
  };
}

async function checkAfter(s: Storage, before: TrialRecord[]) {
  // The rows as written hold every value the test means (a double read back as itself).
  expect(before.map((t) => [t.trialId, t.value, t.stderr])).toEqual(TRIALS.map((t) => [t[0], t[2], t[3]]));
  expect(await s.listAllTrials('o')).toEqual(before);
  expect((await s.exportStudy('default', 'o'))!.trials).toEqual(before);
  expect((await s.listTrials('o', { after: null, limit: 100, state: 'COMPLETED' })).items).toEqual(before.filter((t) => t.state === 'COMPLETED'));
}

describe('migration 009 (SQLite): the outcome as one JSON column', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-outcome-009-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a database at version 8 reads exactly as before after migrating', async () => {
    const file = path.join(dir, 'o.db');
    const db = openDatabase(file);
    migrate(db, loadMigrations().slice(0, BEFORE));
    db.prepare(STUDY_SQL(() => '?')).run('o');
    for (const t of TRIALS) db.prepare(TRIAL_SQL(() => '?')).run(...trialValues(t, (b) => (b ? 1 : 0)));
    const before = db.prepare('SELECT * FROM trials ORDER BY trial_id').all().map((r) => v8Record(r as Record<string, unknown>, (v) => JSON.parse(v as string), (v) => v === 1));
    db.close();
    const s = SqliteStorage.open(file, { writerThread: false });
    try {
      await checkAfter(s, before);
    } finally {
      await s.close();
    }
    const raw = new Database(file, { readonly: true });
    try {
      const cols = raw.prepare<[], { name: string }>('PRAGMA table_info(trials)').all().map((c) => c.name);
      expect(cols).toContain('outcome');
      expect(cols).not.toContain('value');
      expect(cols).not.toContain('stderr');
      // Only the fields that are set; NULL when none is.
      const outcome = (id: number) => raw.prepare<[number], { outcome: string | null }>("SELECT outcome FROM trials WHERE study_id = 'o' AND trial_id = ?").get(id)!.outcome;
      expect(JSON.parse(outcome(1)!)).toEqual({ value: 3 });
      expect(JSON.parse(outcome(2)!)).toEqual({ value: 0.1 + 0.2, stderr: 0.05 });
      expect(outcome(3)).toBeNull();
    } finally {
      raw.close();
    }
  });
});

const server = postgresServer();

describe.skipIf(!server)('migration 009 (PostgreSQL): the outcome as one JSON column, no commit function', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(server!, 'probnes_out9');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('a database at version 8 reads exactly as before after migrating', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    let before: TrialRecord[];
    try {
      await migratePostgres(pool, loadPostgresMigrations().slice(0, BEFORE));
      await pool.query(STUDY_SQL((i) => `$${i}`), ['o']);
      for (const t of TRIALS) await pool.query(TRIAL_SQL((i) => `$${i}`), trialValues(t, (b) => b));
      before = (await pool.query('SELECT * FROM trials ORDER BY trial_id')).rows.map((r: Record<string, unknown>) => v8Record(r, (v) => v, (v) => v as boolean));
    } finally {
      await pool.end();
    }
    const s = await PostgresStorage.open({ url: db.url, poolSize: 2 });
    try {
      await checkAfter(s, before);
    } finally {
      await s.close();
    }
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const cols = (await c.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'trials'")).rows.map((r) => r.column_name);
      expect(cols).toContain('outcome');
      expect(cols).not.toContain('value');
      expect(cols).not.toContain('stderr');
      const outcome = async (id: number) => (await c.query<{ o: string | null }>("SELECT outcome::text AS o FROM trials WHERE study_id = 'o' AND trial_id = $1", [id])).rows[0]!.o;
      expect(JSON.parse((await outcome(1))!)).toEqual({ value: 3 });
      expect(JSON.parse((await outcome(2))!)).toEqual({ value: 0.1 + 0.2, stderr: 0.05 });
      expect(await outcome(3)).toBeNull();
      // The loop's commit is TypeScript's now (src/storage/postgres/commit.ts): no function of it remains.
      expect((await c.query("SELECT proname FROM pg_proc WHERE proname LIKE 'probnes_commit%'")).rows).toEqual([]);
    } finally {
      await c.end();
    }
  });
});
