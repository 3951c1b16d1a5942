/** API keys and tenants on PostgreSQL (KeysStore); only SHA-256 hashes of keys are stored. */
import {
  type ApiKeyRecord,
  type NewApiKeyRecord,
} from '../storage.js';
import type { PgDb } from './db.js';
import { toKey, type KeyRow } from './rows.js';

/** The settings row that records whether the server demands keys ('keyed') or was opened again ('open'). */
const AUTH_MODE = 'auth_mode';
/** Records that the server demands keys (a key was created). */
const MARK_KEYED_SQL = `INSERT INTO settings (key, value) VALUES ('${AUTH_MODE}', 'keyed') ON CONFLICT (key) DO UPDATE SET value = 'keyed'`;
/** Keyed: an active key, or the recorded mode, or (no mode recorded: older databases) any key ever created. */
const IS_KEYED_SQL = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)
  OR COALESCE((SELECT value = 'keyed' FROM settings WHERE key = '${AUTH_MODE}'), EXISTS (SELECT 1 FROM api_keys)) AS keyed`;

export class KeysRepo {
  constructor(private readonly db: PgDb) {}

  createApiKey(key: NewApiKeyRecord): Promise<ApiKeyRecord> {
    // The tenant is created with its first key, in the same transaction.
    return this.db.tx('BEGIN', async (c) => {
      await c.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $1, $2) ON CONFLICT (id) DO NOTHING', [key.tenantId, key.createdAt]);
      const r = await c.query<KeyRow>('INSERT INTO api_keys (id, tenant_id, key_hash, label, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *', [
        key.id,
        key.tenantId,
        key.keyHash,
        key.label,
        key.createdAt,
      ]);
      await c.query(MARK_KEYED_SQL);
      return toKey(r.rows[0]!);
    });
  }

  async findActiveApiKey(keyHash: string): Promise<ApiKeyRecord | null> {
    // Revoked keys are filtered here, so no caller can forget to.
    const [row] = await this.db.rows<KeyRow>('SELECT * FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [keyHash]);
    return row ? toKey(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return (await this.db.rows<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKey);
  }

  async revokeApiKey(id: string, revokedAt: string): Promise<boolean> {
    return this.db.call(async () => (await this.db.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [revokedAt, id])).rowCount === 1);
  }

  async hasActiveApiKeys(): Promise<boolean> {
    return (await this.db.rows('SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1')).length > 0;
  }

  async isKeyed(): Promise<boolean> {
    const [row] = await this.db.rows<{ keyed: boolean }>(IS_KEYED_SQL);
    return row?.keyed === true;
  }

  async markKeyed(): Promise<void> {
    await this.db.rows(MARK_KEYED_SQL);
  }

  async reopenWithoutKeys(): Promise<boolean> {
    // One statement: the mode is written only if no unrevoked key exists at that moment. A key
    // created concurrently still keeps the server keyed while it is active (isKeyed checks both).
    const r = await this.db.rows<{ key: string }>(
      `INSERT INTO settings (key, value) SELECT '${AUTH_MODE}', 'open' WHERE NOT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)
       ON CONFLICT (key) DO UPDATE SET value = 'open' RETURNING key`,
    );
    return r.length === 1;
  }

  async ensureTenant(id: string, createdAt: string): Promise<void> {
    await this.db.rows('INSERT INTO tenants (id, name, created_at) VALUES ($1, $1, $2) ON CONFLICT (id) DO NOTHING', [id, createdAt]);
  }
}
