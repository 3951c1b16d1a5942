/**
 * The SQLite database holds every study and the API keys' hashes: a new one is readable by its owner
 * only (directory 0700, file 0600, and the -wal/-shm files SQLite derives from the file's mode), and
 * so is a backup. Checked with the usual umask (022), under which SQLite alone created 0644 files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backupSqliteFile } from '../../src/storage/sqlite/backup.js';
import { SqliteStorage } from '../../src/storage/index.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-modes-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe.skipIf(process.platform === 'win32')('database file permissions', () => {
  it('a new database: directory 0700, file, -wal and -shm 0600, whatever the umask allowed', async () => {
    const previous = process.umask(0o022);
    try {
      const dir = path.join(tmp, 'new', 'data');
      const file = path.join(dir, 'probnes.db');
      const storage = SqliteStorage.open(file);
      // A write, so that the WAL and its index exist.
      await storage.ensureTenant('acme', '2025-01-01T00:00:00.000Z');
      expect(mode(path.join(tmp, 'new'))).toBe(0o700);
      expect(mode(dir)).toBe(0o700);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect([f, mode(f).toString(8)]).toEqual([f, '600']);

      const copy = path.join(tmp, 'backup.db');
      await backupSqliteFile(file, copy);
      expect(mode(copy).toString(8)).toBe('600');
      await storage.close();
    } finally {
      process.umask(previous);
    }
  });

  it('an existing file keeps the mode its operator gave it', async () => {
    const file = path.join(tmp, 'existing.db');
    fs.writeFileSync(file, '');
    fs.chmodSync(file, 0o640);
    const storage = SqliteStorage.open(file);
    await storage.close();
    expect(mode(file).toString(8)).toBe('640');
  });
});
