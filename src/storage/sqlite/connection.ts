/**
 * Opening the SQLite file with the settings the service relies on.
 *
 * - WAL: readers never block the single writer, and a commit is one sequential append.
 * - synchronous=FULL: in WAL mode NORMAL may lose the last commits on power loss; FULL fsyncs the
 *   WAL at every commit, so a write the server has acknowledged (a 201, a recorded observation)
 *   survives a crash of the machine. The loop amortises the fsync by group commit (observation
 *   requests queued on one study share one transaction; see src/domain/loop/commit-group.ts).
 * - foreign_keys: SQLite leaves them off by default; deleting a study must cascade to its trials.
 * - busy_timeout: another process (a backup, the CLI) holding the write lock briefly makes writers
 *   wait instead of failing at once with SQLITE_BUSY.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export interface OpenOptions {
  busyTimeoutMs?: number;
}

export function openDatabase(file: string, opts: OpenOptions = {}): SqliteDatabase {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? 5000)}`);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
