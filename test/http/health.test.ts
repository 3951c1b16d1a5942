import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/index.js';
import { loadMigrations } from '../../src/storage/sqlite/migrate.js';
import { makeTestApp } from '../helpers/app.js';

describe('probes', () => {
  it('/healthz: the process is up', async () => {
    const { app } = await makeTestApp();
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    await app.close();
  });

  it('/readyz: 200 with the schema version when the database is migrated', async () => {
    const { app } = await makeTestApp();
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', schema_version: loadMigrations().length });
    await app.close();
  });

  it('/readyz: 503 not_ready when the database is unreachable', async () => {
    const storage = SqliteStorage.open(':memory:');
    const { app } = await makeTestApp({ storage });
    await storage.close();
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'not_ready', status: 503 });
    // Liveness is unaffected: the process itself is fine.
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await app.close();
  });

  it('/readyz: 503 when the schema is not the one this code expects', async () => {
    // A real database file whose schema moves under the running server, as when a newer release
    // migrates a shared database: another connection bumps PRAGMA user_version (migrate.ts's version).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-health-'));
    const file = path.join(dir, 'probnes.db');
    const storage = SqliteStorage.open(file);
    const { app } = await makeTestApp({ storage });
    try {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      const expected = ready.json().schema_version as number;
      const other = new Database(file);
      other.pragma(`user_version = ${expected + 1}`);
      other.close();
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'not_ready', status: 503, detail: `database schema version ${expected + 1}, expected ${expected}` });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
