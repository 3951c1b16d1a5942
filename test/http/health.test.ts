import { describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/index.js';
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
    expect(res.json()).toEqual({ status: 'ready', schema_version: 4 });
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
    const storage = SqliteStorage.open(':memory:');
    storage.health = async () => ({ ok: false, schemaVersion: 0, expectedSchemaVersion: 1 });
    const { app } = await makeTestApp({ storage });
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toBe('database schema version 0, expected 1');
    await app.close();
  });
});
