/**
 * Forward-only schema migrations: `migrations/NNN_name.sql`, applied in order, each in its own
 * transaction together with the bump of PRAGMA user_version, so a failed migration leaves the
 * database exactly at the previous version.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqliteDatabase } from './connection.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.sql$/;

/**
 * The migrations directory sits at the project root; walk up from this module so the same code
 * finds it when run from src/ (tsx) and from dist/src/ (compiled).
 */
export function defaultMigrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'migrations');
    if (fs.existsSync(path.join(candidate, '001_initial.sql'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new MigrationError('cannot find the migrations directory (expected migrations/001_initial.sql above the server code)');
}

/** Read and check the migration files: numbered 1, 2, 3, ... without gaps or duplicates. */
export function loadMigrations(dir: string = defaultMigrationsDir()): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const m = FILE_PATTERN.exec(file);
      if (!m) throw new MigrationError(`migration file ${file} does not match NNN_name.sql`);
      return { version: Number(m[1]), name: m[2]!, sql: fs.readFileSync(path.join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new MigrationError(`migrations must be numbered 001, 002, ... without gaps; found ${String(m.version).padStart(3, '0')}_${m.name}.sql at position ${i + 1}`);
  });
  return migrations;
}

export function schemaVersion(db: SqliteDatabase): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Bring the database up to the latest migration; returns the versions applied. */
export function migrate(db: SqliteDatabase, migrations: Migration[] = loadMigrations()): number[] {
  const latest = migrations.length;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new MigrationError(
      `the database schema is at version ${current}, newer than this server knows (${latest}); ` +
        'it was written by a newer release: upgrade the server, or restore a backup made for this version',
    );
  }
  const applied: number[] = [];
  for (const m of migrations.slice(current)) {
    const apply = db.transaction(() => {
      db.exec(m.sql);
      // user_version lives in the database header, which is written inside this transaction.
      db.pragma(`user_version = ${m.version}`);
    });
    try {
      apply.immediate();
    } catch (err) {
      throw new MigrationError(`migration ${String(m.version).padStart(3, '0')}_${m.name}.sql failed: ${(err as Error).message}`);
    }
    applied.push(m.version);
  }
  return applied;
}
