/**
 * PostgreSQL's schema migrations: `migrations/postgres/NNN_name.sql`, numbered like SQLite's and
 * read by the same loader, applied in order, each in its own transaction with its row in
 * `schema_migrations`. Replicas starting together take one advisory lock first, so exactly one
 * applies what is missing and the others then find nothing to do. A database whose schema is
 * newer than this server knows (a newer release migrated it) is refused, never used.
 */
import path from 'node:path';
import type pg from 'pg';
import { checkout } from './connection.js';
import { defaultMigrationsDir, loadMigrations, MigrationError, type Migration } from '../sqlite/migrate.js';

/** The advisory-lock key of migrations (any constant shared by all replicas; "probn" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x70726f626e;

export function loadPostgresMigrations(dir: string = path.join(defaultMigrationsDir(), 'postgres')): Migration[] {
  return loadMigrations(dir);
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`;

/** The highest applied migration; 0 for an empty database (no schema_migrations table yet). */
export async function schemaVersion(c: pg.Pool | pg.PoolClient): Promise<number> {
  try {
    const r = await c.query<{ v: number }>('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations');
    return r.rows[0]?.v ?? 0;
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return 0; // undefined_table
    throw err;
  }
}

/** Brings the database up to the latest migration under the advisory lock; returns the versions applied. */
export async function migratePostgres(pool: pg.Pool, migrations: Migration[] = loadPostgresMigrations()): Promise<number[]> {
  const latest = migrations.length;
  const c = await checkout(pool);
  let broken: Error | undefined;
  try {
    // Session-level and waiting: a replica that starts while another migrates waits for it.
    await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await c.query(CREATE_TABLE);
      const current = await schemaVersion(c);
      if (current > latest) {
        throw new MigrationError(
          `the database schema is at version ${current}, newer than this server knows (${latest}); ` +
            'it was migrated by a newer release: run that release on every replica, or restore a backup made for this version',
        );
      }
      const applied: number[] = [];
      for (const m of migrations.slice(current)) {
        try {
          await c.query('BEGIN');
          await c.query(m.sql);
          await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {});
          throw new MigrationError(`migration postgres/${String(m.version).padStart(3, '0')}_${m.name}.sql failed: ${(err as Error).message}`);
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch((e: Error) => (broken = e));
    }
  } finally {
    c.release(broken);
  }
}
