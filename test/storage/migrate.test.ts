import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/sqlite/connection.js';
import { loadMigrations, migrate, MigrationError, schemaVersion, type Migration } from '../../src/storage/sqlite/migrate.js';
import { SqliteStorage } from '../../src/storage/index.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-migrate-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const m = (version: number, name: string, sql: string): Migration => ({ version, name, sql });

describe('openDatabase', () => {
  it('sets WAL, synchronous=FULL, foreign keys and a busy timeout, creating the directory', () => {
    const file = path.join(dir, 'nested', 'deeper', 'p.db');
    const db = openDatabase(file, { busyTimeoutMs: 1234 });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(2); // 2 = FULL
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
    } finally {
      db.close();
    }
    expect(fs.existsSync(file)).toBe(true);
  });
});

describe('migrate', () => {
  it('applies the project migrations in order and records the version in user_version', () => {
    const db = openDatabase(':memory:');
    const all = loadMigrations();
    expect(all.map((x) => x.version)).toEqual(all.map((_, i) => i + 1));
    expect(migrate(db, all)).toEqual(all.map((x) => x.version));
    expect(schemaVersion(db)).toBe(all.length);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual(expect.arrayContaining(['api_keys', 'engine_states', 'settings', 'studies', 'tenants', 'trials']));
    // Running again is a no-op.
    expect(migrate(db, all)).toEqual([]);
    db.close();
  });

  it('applies only the migrations newer than the database', () => {
    const db = openDatabase(':memory:');
    migrate(db, [m(1, 'a', 'CREATE TABLE a (x)')]);
    expect(migrate(db, [m(1, 'a', 'CREATE TABLE a (x)'), m(2, 'b', 'CREATE TABLE b (y)')])).toEqual([2]);
    expect(schemaVersion(db)).toBe(2);
    db.close();
  });

  it('rolls a failing migration back completely, leaving the previous version', () => {
    const db = openDatabase(':memory:');
    migrate(db, [m(1, 'a', 'CREATE TABLE a (x)')]);
    const bad = m(2, 'bad', 'CREATE TABLE b (y); INSERT INTO a VALUES (1); INSERT INTO nope VALUES (1);');
    expect(() => migrate(db, [m(1, 'a', 'CREATE TABLE a (x)'), bad])).toThrow(/migration 002_bad\.sql failed: no such table: nope/);
    expect(schemaVersion(db)).toBe(1);
    expect(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'").pluck().get()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) FROM a').pluck().get()).toBe(0);
    db.close();
  });

  it('refuses a database written by a newer release, with a clear message', () => {
    const file = path.join(dir, 'newer.db');
    const raw = new Database(file);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => SqliteStorage.open(file)).toThrow(MigrationError);
    expect(() => SqliteStorage.open(file)).toThrow(/schema is at version 99, newer than this server knows \(\d+\); .*upgrade the server/);
  });

  it('rejects gaps and badly named files', () => {
    fs.writeFileSync(path.join(dir, '001_a.sql'), 'SELECT 1;');
    fs.writeFileSync(path.join(dir, '003_c.sql'), 'SELECT 1;');
    expect(() => loadMigrations(dir)).toThrow(/without gaps; found 003_c\.sql at position 2/);
    fs.rmSync(path.join(dir, '003_c.sql'));
    fs.writeFileSync(path.join(dir, '2_Bad Name.sql'), 'SELECT 1;');
    expect(() => loadMigrations(dir)).toThrow(/does not match NNN_name\.sql/);
  });

  it('migrates a file database once and reopens it without re-applying', async () => {
    const file = path.join(dir, 'p.db');
    const s1 = SqliteStorage.open(file);
    const secret = await s1.getSetting('page_token_secret');
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await s1.close();
    const s2 = SqliteStorage.open(file);
    // The seeded secret would change if 001 ran again.
    expect(await s2.getSetting('page_token_secret')).toBe(secret);
    expect(await s2.health()).toEqual({ ok: true, schemaVersion: loadMigrations().length, expectedSchemaVersion: loadMigrations().length });
    await s2.close();
  });
});
