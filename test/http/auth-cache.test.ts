/**
 * The Authenticator's cache (src/domain/auth/api-keys.ts): answers from storage are reused within the
 * TTL, a key created or revoked through this process takes effect at once, one changed by another
 * connection (the CLI in another process) within the TTL, and a flood of unknown keys stays bounded.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiKeyService, Authenticator, generateApiKey, hashApiKey } from '../../src/domain/auth/api-keys.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-auth-cache-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  while (opened.length) await opened.pop()!.close();
});

let n = 0;
/** A file database, the server's storage on it, and a second plain connection standing for another process. */
function setup() {
  const file = path.join(tmp, `auth-${++n}.db`);
  const storage = SqliteStorage.open(file);
  const other = new Database(file);
  opened.push(storage, other);
  // Counts what reaches the database, to tell cached answers from fresh ones.
  const calls = { find: 0, any: 0 };
  const counted: Pick<Storage, 'findActiveApiKey' | 'isKeyed'> = {
    findActiveApiKey: (hash) => (calls.find++, storage.findActiveApiKey(hash)),
    isKeyed: () => (calls.any++, storage.isKeyed()),
  };
  const clock = { t: 0 };
  const auth = (allowOpen: boolean, cacheTtlMs = 1000) => new Authenticator({ storage: counted, allowOpen, cacheTtlMs, clock: () => clock.t });
  return { storage, other, calls, clock, auth, keys: new ApiKeyService({ storage }) };
}

/** What the CLI of another process does: insert an active key row by SQL. */
function insertElsewhere(other: Database.Database, tenant: string, key: string): void {
  const now = new Date().toISOString();
  other.prepare('INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING').run(tenant, tenant, now);
  other.prepare('INSERT INTO api_keys (id, tenant_id, key_hash, label, created_at) VALUES (?, ?, ?, NULL, ?)').run(`key_other${n}`, tenant, hashApiKey(key), now);
}

describe('Authenticator cache', () => {
  it('asks storage once per key and TTL, not once per request', async () => {
    const { calls, clock, auth, keys } = setup();
    const { key, record } = await keys.create('acme');
    const a = auth(false);
    for (let i = 0; i < 5; i++) expect(await a.authenticate(key)).toEqual({ ok: true, principal: { tenantId: 'acme', keyId: record.id } });
    for (let i = 0; i < 5; i++) expect(await a.authenticate('pnk_unknown')).toEqual({ ok: false, reason: 'invalid' });
    expect(calls.find).toBe(2);
    clock.t += 1000;
    expect((await a.authenticate(key)).ok).toBe(true);
    expect(calls.find).toBe(3);
  });

  it('caches "no key exists" in open mode, and a key created through this process closes it at once', async () => {
    const { calls, auth, keys } = setup();
    // A long TTL: only the invalidation can explain an immediate change.
    const a = auth(true, 60_000);
    for (let i = 0; i < 5; i++) expect(await a.authenticate(null)).toEqual({ ok: true, principal: { tenantId: 'default', keyId: null } });
    expect(calls.any).toBe(1);
    const { key } = await keys.create('acme');
    expect(await a.authenticate(null)).toEqual({ ok: false, reason: 'missing' });
    expect((await a.authenticate(key)).ok).toBe(true);
  });

  it('refuses a key revoked through this process at once, whatever the TTL', async () => {
    const { auth, keys } = setup();
    const { key, record } = await keys.create('acme');
    const a = auth(false, 60_000);
    expect((await a.authenticate(key)).ok).toBe(true);
    expect(await keys.revoke(record.id)).toBe(true);
    expect(await a.authenticate(key)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('sees a key revoked by another connection within the TTL, not before', async () => {
    const { other, clock, auth, keys } = setup();
    const { key, record } = await keys.create('acme');
    const a = auth(false);
    expect((await a.authenticate(key)).ok).toBe(true);
    other.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), record.id);
    clock.t += 999;
    // Still the cached answer: this is the documented bound, not a wish.
    expect((await a.authenticate(key)).ok).toBe(true);
    clock.t += 1;
    expect(await a.authenticate(key)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('sees a key created by another connection within the TTL: open mode ends and the new key works', async () => {
    const { other, clock, auth } = setup();
    const a = auth(true);
    const key = generateApiKey();
    expect((await a.authenticate(null)).ok).toBe(true);
    expect(await a.authenticate(key)).toEqual({ ok: false, reason: 'invalid' });
    insertElsewhere(other, 'beta', key);
    clock.t += 999;
    // Both answers cached just before the insert still hold until the TTL is over.
    expect((await a.authenticate(null)).ok).toBe(true);
    expect(await a.authenticate(key)).toEqual({ ok: false, reason: 'invalid' });
    clock.t += 1;
    expect(await a.authenticate(null)).toEqual({ ok: false, reason: 'missing' });
    expect(await a.authenticate(key)).toEqual({ ok: true, principal: { tenantId: 'beta', keyId: `key_other${n}` } });
  });

  it('with a TTL of 0 asks storage on every request', async () => {
    const { calls, auth, keys } = setup();
    const { key } = await keys.create('acme');
    const a = auth(false, 0);
    for (let i = 0; i < 3; i++) expect((await a.authenticate(key)).ok).toBe(true);
    expect(calls.find).toBe(3);
  });

  it('keeps a bounded number of lookups under a flood of made-up keys, and still knows the real one', async () => {
    const { calls, auth, keys } = setup();
    const { key } = await keys.create('acme');
    const a = auth(false, 60_000);
    expect((await a.authenticate(key)).ok).toBe(true);
    for (let i = 0; i < 10_050; i++) await a.authenticate(`pnk_flood_${i}`);
    const before = calls.find;
    // The oldest entries (the real key's among them) were dropped: it is looked up again, and accepted.
    expect((await a.authenticate(key)).ok).toBe(true);
    expect(calls.find).toBe(before + 1);
    // The most recent flood entries are still cached.
    await a.authenticate('pnk_flood_10049');
    expect(calls.find).toBe(before + 1);
  });
});
