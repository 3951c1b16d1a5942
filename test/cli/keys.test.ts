/** `probnes keys`: create prints the key once and stores only its SHA-256; list never shows keys; revoke works. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Authenticator, hashApiKey } from '../../src/domain/auth/api-keys.js';
import { SqliteStorage } from '../../src/storage/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-cli-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function freshDb(): string {
  return path.join(tmp, `keys-${++n}.db`);
}

async function cli(db: string, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s), env: { DATABASE_PATH: db } });
  return { code, out, err };
}

function rows(db: string) {
  const conn = new Database(db, { readonly: true });
  try {
    return conn.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[];
  } finally {
    conn.close();
  }
}

describe('probnes keys', () => {
  it('create prints a fresh 256-bit key once, on stdout alone, and stores only its SHA-256', async () => {
    const db = freshDb();
    const r = await cli(db, 'keys', 'create', '--tenant', 'acme', '--label', 'ci runner');
    expect(r.code).toBe(0);
    const key = r.out.trim();
    expect(r.out).toBe(`${key}\n`);
    expect(key).toMatch(/^pnk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(32);
    expect(r.err).toMatch(/created key key_[0-9a-f]{16} for tenant acme/);
    expect(r.err).not.toContain(key);

    const stored = rows(db);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ tenant_id: 'acme', label: 'ci runner', key_hash: hashApiKey(key), revoked_at: null });
    // Nowhere in the row, nor anywhere in the database file, is the key itself.
    expect(JSON.stringify(stored)).not.toContain(key.slice(4));
    const files = fs.readdirSync(tmp).filter((f) => f.startsWith(path.basename(db)));
    for (const f of files) expect(fs.readFileSync(path.join(tmp, f)).includes(key.slice(4))).toBe(false);

    const second = await cli(db, 'keys', 'create', '--tenant', 'acme');
    expect(second.out.trim()).not.toBe(key);
  });

  it('list shows ids, tenants, labels and dates, never keys or hashes', async () => {
    const db = freshDb();
    const k1 = (await cli(db, 'keys', 'create', '--tenant', 'acme', '--label', 'one')).out.trim();
    const k2 = (await cli(db, 'keys', 'create', '--tenant', 'beta')).out.trim();
    const table = await cli(db, 'keys', 'list');
    expect(table.code).toBe(0);
    expect(table.out.split('\n')[0]).toMatch(/^ID\s+TENANT\s+LABEL\s+CREATED\s+REVOKED$/);
    expect(table.out).toContain('acme');
    expect(table.out).toContain('beta');
    const json = await cli(db, 'keys', 'list', '--json');
    const listed = JSON.parse(json.out) as Record<string, unknown>[];
    expect(listed.map((k) => Object.keys(k).sort())).toEqual([['createdAt', 'id', 'label', 'revokedAt', 'tenantId'], ['createdAt', 'id', 'label', 'revokedAt', 'tenantId']]);
    for (const out of [table.out, json.out]) {
      for (const k of [k1, k2]) {
        expect(out).not.toContain(k);
        expect(out).not.toContain(hashApiKey(k));
      }
    }
  });

  it('revoke stops the key from authenticating; revoking twice or an unknown id fails', async () => {
    const db = freshDb();
    const key = (await cli(db, 'keys', 'create', '--tenant', 'acme')).out.trim();
    const id = JSON.parse((await cli(db, 'keys', 'list', '--json')).out)[0].id as string;
    const storage = SqliteStorage.open(db);
    const auth = new Authenticator({ storage, allowOpen: false });
    try {
      expect(await auth.authenticate(key)).toEqual({ ok: true, principal: { tenantId: 'acme', keyId: id } });
      expect(await cli(db, 'keys', 'revoke', id)).toMatchObject({ code: 0 });
      expect(await auth.authenticate(key)).toEqual({ ok: false, reason: 'invalid' });
      const again = await cli(db, 'keys', 'revoke', id);
      expect(again.code).toBe(1);
      expect(again.err).toMatch(/no active key/);
      expect((await cli(db, 'keys', 'revoke', 'key_nope')).code).toBe(1);
      expect(JSON.parse((await cli(db, 'keys', 'list', '--json')).out)[0].revokedAt).toEqual(expect.any(String));
    } finally {
      await storage.close();
    }
  });

  it('rejects bad tenant names, labels and usage with exit code 2', async () => {
    const db = freshDb();
    for (const argv of [
      ['keys', 'create'],
      ['keys', 'create', '--tenant', 'has space'],
      ['keys', 'create', '--tenant', "x'; DROP TABLE api_keys;--"],
      ['keys', 'create', '--tenant', 'ok', '--label', 'line\nbreak'],
      ['keys', 'create', '--tenant', 'ok', '--bogus'],
      ['keys', 'revoke'],
      ['keys', 'frobnicate'],
      ['keys'],
      ['nonsense'],
    ]) {
      const r = await cli(db, ...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out).toBe('');
    }
    expect(fs.existsSync(db) ? rows(db) : []).toEqual([]);
  });

  it('runs through bin/probnes.js', async () => {
    const db = freshDb();
    const run = promisify(execFile);
    const created = await run(process.execPath, [path.join(ROOT, 'bin/probnes.js'), 'keys', 'create', '--tenant', 'acme'], { env: { ...process.env, DATABASE_PATH: db }, cwd: tmp });
    expect(created.stdout).toMatch(/^pnk_[A-Za-z0-9_-]{43}\n$/);
    const listed = await run(process.execPath, [path.join(ROOT, 'bin/probnes.js'), 'keys', 'list'], { env: { ...process.env, DATABASE_PATH: db }, cwd: tmp });
    expect(listed.stdout).toContain('acme');
  }, 30_000);
});
