import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/index.js';
import { storageContract, study } from './contract.js';

storageContract('SQLite in memory', async () => SqliteStorage.open(':memory:'));

describe('SqliteStorage on disk', () => {
  it('keeps acknowledged writes across a close and reopen, as one file without a WAL left over', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-sqlite-'));
    const file = path.join(dir, 'p.db');
    try {
      const s = SqliteStorage.open(file);
      await s.createStudy(study('kept'));
      await s.close();
      expect(fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0).toBe(0);
      const raw = new Database(file, { readonly: true });
      expect(raw.prepare('SELECT name FROM studies WHERE id = ?').pluck().get('kept')).toBe('study kept');
      raw.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports unhealthy once closed instead of throwing', async () => {
    const s = SqliteStorage.open(':memory:');
    await s.close();
    const h = await s.health();
    expect(h.ok).toBe(false);
    expect(h.detail).toMatch(/not open/);
  });

  it('enforces foreign keys: a study needs an existing tenant', async () => {
    const s = SqliteStorage.open(':memory:');
    await expect(s.createStudy(study('x', 'no-such-tenant'))).rejects.toThrow(/FOREIGN KEY/);
    await s.close();
  });
});
