/**
 * `probnes backup DEST`: a consistent copy of the server's database (DATABASE_PATH) while the server
 * keeps running, through SQLite's online backup API (src/storage/sqlite/backup.ts), then an
 * integrity check of the copy. Never overwrites DEST.
 */
import path from 'node:path';
import { ConfigError, loadConfig } from '../config.js';
import { backupSqliteFile } from '../storage/sqlite/backup.js';
import { parse, UsageError, type CliIo } from './common.js';

export const BACKUP_USAGE = `usage: probnes backup DEST

Copies the database named by DATABASE_PATH (default ./data/probnes.db) to the new file DEST with
SQLite's online backup API, safely while the server runs and writes (a plain cp of a live WAL
database can miss committed transactions or copy torn pages), then checks the copy's integrity.
DEST must not exist. To restore: stop the server, replace the database file with the copy (and
remove any -wal and -shm files next to it), start the server.

examples:
  probnes backup /backups/probnes-$(date +%F).db
  DATABASE_PATH=/data/probnes.db probnes backup /backups/nightly.db
`;

export async function runBackup(argv: string[], io: CliIo): Promise<number> {
  let dest: string;
  try {
    const { values, positionals } = parse(argv, {}, 1);
    if (values.help) {
      io.out(BACKUP_USAGE);
      return 0;
    }
    dest = path.resolve(io.cwd ?? process.cwd(), positionals[0]!);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`probnes backup: ${err.message}\nusage: probnes backup DEST  (see probnes backup --help)\n`);
      return 2;
    }
    throw err;
  }
  let source: string;
  try {
    source = loadConfig(io.env, io.cwd ?? process.cwd()).databasePath;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`probnes: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (source === ':memory:') {
    io.err('probnes backup: DATABASE_PATH is :memory:, there is no file to back up\n');
    return 2;
  }
  try {
    const r = await backupSqliteFile(source, dest);
    io.err(`backed up ${source} to ${dest}: ${r.pages} pages, ${r.bytes} bytes, schema version ${r.schemaVersion}, integrity ok\n`);
    return 0;
  } catch (err) {
    io.err(`probnes backup: ${(err as Error).message}\n`);
    return 1;
  }
}
