/**
 * The connection pool (node-postgres) with the settings the service relies on, and the one place
 * that decides which driver errors mean "the database is unreachable" (StorageUnavailableError,
 * a retryable 503) rather than a bug.
 *
 * - statement_timeout: no statement (so no row lock) outlives it; a stuck query fails instead of
 *   holding a study's lock and a pool connection for ever.
 * - idle_in_transaction_session_timeout: a replica that froze mid-transaction (SIGSTOP, a paused
 *   VM) has its transaction rolled back and its locks released by the server. A replica that died
 *   needs no timeout: its connections close and the server rolls back at once.
 * - int8 as a JS number: the only int8 columns are sequences and counts, far below 2^53.
 * - synchronous_commit stays at the server's default (on): a COMMIT returns once the WAL is on
 *   disk, so an acknowledged write survives a crash of the database server too.
 */
import pg from 'pg';
import { StorageUnavailableError } from '../storage.js';

export interface PostgresOptions {
  /** postgres://user:password@host:port/database?sslmode=require (sslmode: disable, require, verify-ca, verify-full, no-verify). */
  url: string;
  /** Connections per process (each replica has its own pool). */
  poolSize?: number;
  statementTimeoutMs?: number;
  /** How long to wait for a new connection (and so how long /readyz takes to fail when the server is black-holed). */
  connectTimeoutMs?: number;
  /** Application name the server shows in pg_stat_activity. */
  applicationName?: string;
}

const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function createPool(o: PostgresOptions): pg.Pool {
  const statementTimeout = o.statementTimeoutMs ?? 10_000;
  return new pg.Pool({
    connectionString: o.url,
    max: o.poolSize ?? 10,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeout,
    idle_in_transaction_session_timeout: Math.max(statementTimeout * 2, 5_000),
    application_name: o.applicationName ?? 'probnes-server',
    types,
  });
}

/** SQLSTATE classes and codes after which the same request may succeed on a retry (another connection, a moment later). */
const RETRYABLE_SQLSTATE = new Set(['57P01', '57P02', '57P03', '57014', '40001', '40P01', '55P03']);
const NETWORK_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);
const DRIVER_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /not queryable/, /Client was closed/, /Connection ended/, /the database system is (starting up|shutting down)/];

/** Whether `err` says the database (or the way to it) failed, not the statement. */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (RETRYABLE_SQLSTATE.has(code) || code.startsWith('08') || code.startsWith('53')) return true;
  if (NETWORK_ERRNO.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return DRIVER_MESSAGES.some((re) => re.test(message));
}

/** Driver errors as the storage contract speaks of them. */
export function translate(err: unknown): unknown {
  if (err instanceof StorageUnavailableError || !isUnavailable(err)) return err;
  return new StorageUnavailableError(`the database is unavailable: ${(err as Error).message}`, err);
}

/**
 * `fn` in one transaction on one pooled connection: COMMIT if it returns, ROLLBACK if it throws.
 * A connection whose ROLLBACK fails (it was cut) is destroyed, never handed to the next caller.
 */
export async function transaction<T>(pool: pg.Pool, begin: string, fn: (c: pg.PoolClient) => Promise<T>, onStatement?: () => void): Promise<T> {
  const c = await checkout(pool, onStatement);
  let broken: Error | undefined;
  try {
    await c.query(begin);
    try {
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    }
  } catch (err) {
    if (isUnavailable(err)) broken ??= err as Error;
    throw err;
  } finally {
    c.release(broken);
  }
}

/**
 * A pooled connection for a caller's own sequence of statements. While checked out, a connection
 * that dies between two statements (pg_terminate_backend) emits 'error' on the client, which the
 * pool listens to only while the connection is idle: unheard, it would crash the process. Heard,
 * the next statement fails (a 503) and the release destroys the connection.
 */
export async function checkout(pool: pg.Pool, onStatement?: () => void): Promise<pg.PoolClient> {
  const c = await pool.connect();
  const onError = () => {};
  c.on('error', onError);
  const release = c.release.bind(c);
  const query = c.query;
  // Counted per statement (the round trips of a unit of work, for /metrics and bench:load).
  if (onStatement) {
    c.query = function (this: pg.PoolClient, ...args: unknown[]) {
      onStatement();
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof c.query;
  }
  c.release = (err?: Error | boolean) => {
    c.off('error', onError);
    c.query = query;
    release(err);
  };
  return c;
}
