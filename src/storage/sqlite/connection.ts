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
 * - Permissions: the file holds every study and the API keys' hashes, so a new database is created
 *   readable by its owner only (file 0600, a new directory 0700). SQLite gives the -wal and -shm
 *   files the mode of the database file, so they follow. An existing file keeps its mode: the
 *   operator chose it (docs/security.md says how to tighten an older one).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export interface OpenOptions {
  busyTimeoutMs?: number;
}

/** Owner-only modes for what a new database creates (before the umask, which can only remove bits). */
export const DATABASE_DIR_MODE = 0o700;
export const DATABASE_FILE_MODE = 0o600;

/**
 * Creates `file` empty with owner-only permissions if it does not exist (SQLite takes an empty file
 * for a new database, and would itself create it 0644). 'wx' fails if another process created it
 * in between; that file is then used as it is.
 */
function createPrivately(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: DATABASE_DIR_MODE });
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', DATABASE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    // Exactly 0600, whatever the umask left of it.
    fs.fchmodSync(fd, DATABASE_FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
}

export function openDatabase(file: string, opts: OpenOptions = {}): SqliteDatabase {
  // ':memory:' and '' (a private temporary database) are no files of ours.
  if (file !== ':memory:' && file !== '' && !file.startsWith('file:')) createPrivately(file);
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
