/** All SQL for tenants and API keys. Synchronous (better-sqlite3); SqliteStorage wraps it in Promises. */
import type { SqliteDatabase } from './connection.js';
import type { ApiKeyRecord, NewApiKeyRecord } from '../storage.js';
import { toKey, type KeyRow } from './rows.js';

/** The settings row that records whether the server demands keys ('keyed') or was opened again ('open'). */
const AUTH_MODE = 'auth_mode';

export class KeysRepo {
  private readonly ensureTenantStmt;
  private readonly insertStmt;
  private readonly byHashStmt;
  private readonly byIdStmt;
  private readonly listStmt;
  private readonly revokeStmt;
  private readonly anyActiveStmt;
  private readonly isKeyedStmt;
  private readonly setModeStmt;

  constructor(private readonly db: SqliteDatabase) {
    this.ensureTenantStmt = db.prepare<[string, string, string]>('INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
    this.insertStmt = db.prepare<[string, string, string, string | null, string]>(
      'INSERT INTO api_keys (id, tenant_id, key_hash, label, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    // Revoked keys are filtered here, so no caller can forget to.
    this.byHashStmt = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL');
    this.byIdStmt = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
    this.listStmt = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
    this.revokeStmt = db.prepare<[string, string]>('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
    this.anyActiveStmt = db.prepare<[], { one: number }>('SELECT 1 AS one FROM api_keys WHERE revoked_at IS NULL LIMIT 1');
    // Keyed: an active key, or the recorded mode, or (no mode recorded: older databases) any key ever created.
    this.isKeyedStmt = db.prepare<[], { keyed: number }>(`SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)
      OR COALESCE((SELECT value = 'keyed' FROM settings WHERE key = '${AUTH_MODE}'), EXISTS (SELECT 1 FROM api_keys)) AS keyed`);
    this.setModeStmt = db.prepare<[string]>(`INSERT INTO settings (key, value) VALUES ('${AUTH_MODE}', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
  }

  ensureTenant(id: string, createdAt: string): void {
    this.ensureTenantStmt.run(id, id, createdAt);
  }

  /** The tenant is created with its first key, and the server marked keyed, in the same transaction. */
  create(key: NewApiKeyRecord): ApiKeyRecord {
    return this.db.transaction(() => {
      this.ensureTenant(key.tenantId, key.createdAt);
      this.insertStmt.run(key.id, key.tenantId, key.keyHash, key.label, key.createdAt);
      this.setModeStmt.run('keyed');
      return toKey(this.byIdStmt.get(key.id)!);
    }).immediate();
  }

  activeByHash(keyHash: string): ApiKeyRecord | null {
    const row = this.byHashStmt.get(keyHash);
    return row ? toKey(row) : null;
  }

  list(): ApiKeyRecord[] {
    return this.listStmt.all().map(toKey);
  }

  /** False when there is no such key or it was already revoked. */
  revoke(id: string, revokedAt: string): boolean {
    return this.revokeStmt.run(revokedAt, id).changes === 1;
  }

  anyActive(): boolean {
    return this.anyActiveStmt.get() !== undefined;
  }

  /** See Storage.isKeyed. */
  isKeyed(): boolean {
    return this.isKeyedStmt.get()!.keyed === 1;
  }

  /** See Storage.markKeyed. */
  markKeyed(): void {
    this.setModeStmt.run('keyed');
  }

  /** See Storage.reopenWithoutKeys; one immediate transaction, so no key can appear in between. */
  reopen(): boolean {
    return this.db.transaction(() => {
      if (this.anyActive()) return false;
      this.setModeStmt.run('open');
      return true;
    }).immediate();
  }
}
