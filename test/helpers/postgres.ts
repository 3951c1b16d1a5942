/**
 * A PostgreSQL database of its own for a test file: created from the server the global setup found
 * (test/postgres-setup.ts), dropped at the end. Without a server the tests skip, except with
 * CI=true, where a PostgreSQL test never skips: it fails, saying why there is no server.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** The maintenance URL, or null when these tests should skip (never with CI=true). */
export function postgresServer(): string | null {
  return postgresOrSkip(inject('postgresUrl'), inject('postgresProblem'), process.env.CI === 'true');
}

/**
 * What the global setup found → the URL; or, without a server, a skip with a warning, except on CI
 * (CI=true), where the file fails saying why: a run that silently skipped every PostgreSQL test
 * (an embedded server whose install script did not run, say) must not pass.
 */
export function postgresOrSkip(url: string | null, why: string, ci: boolean): string | null {
  if (url) return url;
  if (ci) throw new Error(`PostgreSQL tests cannot run, and with CI=true they never skip: ${why}`);
  console.warn(`skipping PostgreSQL tests: ${why}`);
  return null;
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(server: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createTestDatabase(server: string, prefix = 'probnes_test'): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(server, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: withDatabase(server, name),
    // FORCE: a server process a test killed may still hold a connection.
    drop: () => admin(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
