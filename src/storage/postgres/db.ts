/**
 * The pool every PostgreSQL repository shares, and the three ways they reach it: one statement,
 * one transaction, any call, each with driver errors as the storage contract names them
 * (StorageUnavailableError) and counted for /metrics (statements, lost connections, commits and
 * their row-lock time).
 */
import type pg from 'pg';
import { StorageUnavailableError } from '../storage.js';
import { transaction, translate } from './connection.js';

export class PgDb {
  readonly counts = { statements: 0, commits: 0, lockHeldMsSum: 0, lockHeldMsMax: 0 };
  connectionErrors = 0;
  private readonly countStatement = () => void this.counts.statements++;

  constructor(readonly pool: pg.Pool) {}

  /** Runs one storage call, with driver errors as the contract names them. */
  async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const e = translate(err);
      if (e instanceof StorageUnavailableError) this.connectionErrors++;
      throw e;
    }
  }

  /**
   * One statement on a pooled connection. `name` makes it a prepared statement (parsed and planned
   * once per connection, then only bound and executed): used for the two statements every loop
   * request sends, where parsing the loop-state query was a visible share of the database's CPU.
   */
  async rows<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], name?: string): Promise<R[]> {
    this.counts.statements++;
    return this.call(async () => (await this.pool.query<R>(name ? { name, text, values } : { text, values })).rows);
  }

  tx<T>(begin: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.call(() => transaction(this.pool, begin, fn, this.countStatement));
  }
}
