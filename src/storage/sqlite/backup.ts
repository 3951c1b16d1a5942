/**
 * A consistent copy of a live SQLite database, for `probnes backup`. SQLite's online backup API
 * copies pages from a connection, so it sees committed data whether it is still in the WAL or
 * already in the main file, and the copy is one self-contained file (journal_mode DELETE is not
 * forced: the copy keeps the WAL header flag, and SQLite recreates -wal/-shm when it is opened).
 * Copying the file with cp while a server writes would miss the WAL's commits or tear pages.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { DATABASE_FILE_MODE } from './connection.js';

export interface BackupResult {
  pages: number;
  bytes: number;
  /** PRAGMA user_version of the copy (the schema version, see migrate.ts). */
  schemaVersion: number;
}

/** Copies `source` (which must exist; it is never created or migrated) to `dest` (which must not). */
export async function backupSqliteFile(source: string, dest: string): Promise<BackupResult> {
  if (fs.existsSync(dest)) throw new Error(`${dest} already exists; a backup never overwrites a file`);
  // Not read-only: a read-only connection cannot open a WAL database whose -shm it cannot create.
  // The busy timeout lets the copy wait out a writer's lock, as the server's own writers wait for us.
  const db = new Database(source, { fileMustExist: true });
  try {
    // The copy holds what the database holds (studies, key hashes): owner-only, like a new database
    // (connection.ts). 'wx' also makes "never overwrites" hold against a file appearing meanwhile.
    fs.closeSync(fs.openSync(dest, 'wx', DATABASE_FILE_MODE));
    fs.chmodSync(dest, DATABASE_FILE_MODE);
    db.pragma('busy_timeout = 5000');
    const { totalPages } = await db.backup(dest);
    const copy = new Database(dest, { readonly: true });
    try {
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy failed its integrity check: ${String(check)}`);
      return { pages: totalPages, bytes: fs.statSync(dest).size, schemaVersion: copy.pragma('user_version', { simple: true }) as number };
    } finally {
      copy.close();
    }
  } finally {
    db.close();
  }
}
