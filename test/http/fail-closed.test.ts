/**
 * Security that fails closed: a server that has had keys stays keyed when its last key is revoked,
 * across a restart too (the state is in the database), until `probnes keys open --confirm`; studies
 * made while the server ran open stay with tenant `default`, and `probnes keys create` for another
 * tenant says so and how to reach them. The same storage rule on PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { main } from '../../src/cli/main.js';
import { PostgresStorage, SqliteStorage, type Storage } from '../../src/storage/index.js';
import { studyBody } from '../helpers/app.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-fail-closed-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const closing: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  while (closing.length) await closing.pop()!.close();
});

let n = 0;
const freshDb = () => path.join(tmp, `fc-${++n}.db`);

async function cli(db: string, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s), env: { DATABASE_PATH: db } });
  return { code, out: out.trim(), err };
}

/** The server over `db` as src/server.ts starts it: open only when the database is not keyed. */
async function boot(db: string): Promise<FastifyInstance> {
  const storage = SqliteStorage.open(db);
  const app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000 }, storage, auth: { allowOpen: !(await storage.isKeyed()) } });
  app.addHook('onClose', async () => storage.close());
  closing.push(app);
  return app;
}

const list = (app: FastifyInstance, key?: string) => app.inject({ method: 'GET', url: '/v1/studies', headers: key ? { authorization: `Bearer ${key}` } : {} });

describe('revoking the last key', () => {
  it('keeps a server that started open keyed, in the running process and after a restart', async () => {
    const db = freshDb();
    const app = await boot(db);
    expect((await list(app)).statusCode).toBe(200);
    const created = await cli(db, 'keys', 'create', '--tenant', 'acme');
    expect(created.code).toBe(0);
    expect((await list(app)).statusCode).toBe(401);
    expect((await list(app, created.out)).statusCode).toBe(200);

    const id = /created key (key_[0-9a-f]+)/.exec(created.err)![1]!;
    expect((await cli(db, 'keys', 'revoke', id)).code).toBe(0);
    // Before: the server turned open again (200 without a key).
    expect((await list(app)).statusCode).toBe(401);
    expect((await list(app, created.out)).statusCode).toBe(401);
    await app.close();

    const restarted = await boot(db);
    expect((await list(restarted)).statusCode).toBe(401);
  });

  it('is undone only by `probnes keys open --confirm`, refused while a key is active', async () => {
    const db = freshDb();
    const app = await boot(db);
    const a = await cli(db, 'keys', 'create', '--tenant', 'acme');
    const b = await cli(db, 'keys', 'create', '--tenant', 'beta');
    const idOf = (r: { err: string }) => /created key (key_[0-9a-f]+)/.exec(r.err)![1]!;

    const unconfirmed = await cli(db, 'keys', 'open');
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.err).toContain('--confirm');
    await cli(db, 'keys', 'revoke', idOf(a));
    const refused = await cli(db, 'keys', 'open', '--confirm');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/keys are still active/);
    expect((await list(app, b.out)).statusCode).toBe(200);

    await cli(db, 'keys', 'revoke', idOf(b));
    expect((await list(app)).statusCode).toBe(401);
    const opened = await cli(db, 'keys', 'open', '--confirm');
    expect(opened.code).toBe(0);
    expect((await list(app)).statusCode).toBe(200);
    await app.close();
    expect((await list(await boot(db))).statusCode).toBe(200);
  });

  it('a database from before the rule, with only revoked keys and no recorded mode, counts as keyed', async () => {
    const db = freshDb();
    const created = await cli(db, 'keys', 'create', '--tenant', 'acme');
    await cli(db, 'keys', 'revoke', /created key (key_[0-9a-f]+)/.exec(created.err)![1]!);
    const conn = new Database(db);
    conn.prepare("DELETE FROM settings WHERE key = 'auth_mode'").run();
    conn.close();
    expect((await list(await boot(db))).statusCode).toBe(401);
  });
});

describe('studies made while the server ran open', () => {
  it('stay with tenant default; the first key of another tenant says so and how to reach them', async () => {
    const db = freshDb();
    const app = await boot(db);
    const made = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', batch_size: 1 }) });
    expect(made.statusCode).toBe(201);

    const acme = await cli(db, 'keys', 'create', '--tenant', 'acme');
    expect(acme.code).toBe(0);
    expect(acme.err).toContain('belong to tenant "default"');
    expect(acme.err).toContain('probnes keys create --tenant default');
    expect((await list(app, acme.out)).json().studies).toEqual([]);

    const dflt = await cli(db, 'keys', 'create', '--tenant', 'default');
    expect(dflt.err).not.toContain('belong to tenant "default"');
    expect((await list(app, dflt.out)).json().studies.map((s: { id: string }) => s.id)).toEqual([made.json().id]);
    // With default reachable, another tenant's key needs no note.
    expect((await cli(db, 'keys', 'create', '--tenant', 'gamma')).err).not.toContain('belong to tenant "default"');
  });

  it('no note when the open server made no study', async () => {
    const db = freshDb();
    await boot(db);
    expect((await cli(db, 'keys', 'create', '--tenant', 'acme')).err).not.toContain('default');
  });
});

/** The storage rule itself, on each backend. */
function keyedContract(open: () => Promise<Storage>) {
  return async () => {
    const s = await open();
    closing.push(s);
    expect(await s.isKeyed()).toBe(false);
    await s.createApiKey({ id: 'key_a', tenantId: 'acme', keyHash: 'a'.repeat(64), label: null, createdAt: '2025-01-01T00:00:00.000Z' });
    expect(await s.isKeyed()).toBe(true);
    expect(await s.reopenWithoutKeys()).toBe(false);
    expect(await s.isKeyed()).toBe(true);
    await s.revokeApiKey('key_a', '2025-01-02T00:00:00.000Z');
    expect(await s.hasActiveApiKeys()).toBe(false);
    expect(await s.isKeyed()).toBe(true);
    expect(await s.reopenWithoutKeys()).toBe(true);
    expect(await s.isKeyed()).toBe(false);
    await s.createApiKey({ id: 'key_b', tenantId: 'acme', keyHash: 'b'.repeat(64), label: null, createdAt: '2025-01-03T00:00:00.000Z' });
    expect(await s.isKeyed()).toBe(true);
    // Keys from the environment are not stored; the server marks the database keyed for them.
    await s.revokeApiKey('key_b', '2025-01-04T00:00:00.000Z');
    expect(await s.reopenWithoutKeys()).toBe(true);
    await s.markKeyed();
    expect(await s.isKeyed()).toBe(true);
  };
}

describe('Storage.isKeyed / reopenWithoutKeys', () => {
  it('SQLite', keyedContract(async () => SqliteStorage.open(':memory:')));

  const server = postgresServer();
  let pgDb: TestDatabase;
  beforeAll(async () => {
    if (server) pgDb = await createTestDatabase(server);
  });
  afterAll(async () => {
    await pgDb?.drop();
  });
  it.skipIf(!server)('PostgreSQL', keyedContract(async () => PostgresStorage.open({ url: pgDb.url })));
});
