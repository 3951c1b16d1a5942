import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('defaults to loopback:8080 and a database under ./data', () => {
    const c = loadConfig({}, '/srv');
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', databasePath: path.resolve('/srv/data/probnes.db'), logLevel: 'info', bodyLimit: 1048576, requestTimeoutMs: 30000 });
  });

  it('parses every variable and resolves a relative DATABASE_PATH against the working directory', () => {
    const c = loadConfig(
      { PORT: '9000', HOST: '0.0.0.0', DATABASE_PATH: 'db/x.db', LOG_LEVEL: 'debug', BODY_LIMIT: '2048', REQUEST_TIMEOUT_MS: '0', SHUTDOWN_TIMEOUT_MS: '500', LOG_PRETTY: 'false', ENGINE_WORKERS: '3' },
      '/srv',
    );
    expect(c).toEqual({ port: 9000, host: '0.0.0.0', databasePath: '/srv/db/x.db', logLevel: 'debug', bodyLimit: 2048, requestTimeoutMs: 0, shutdownTimeoutMs: 500, logPretty: 'false', engineWorkers: 3, engineQueue: { perTenant: 8, perStudy: 2, maxWaitMs: 10_000, lightMs: 50 }, studyCostMax: 100_000_000, apiKeys: [], allowInsecureOpen: false, rateLimitPerMinute: 6000, rateLimitOpenLoopbackPerMinute: 0, connectionTimeoutMs: 120000, keepAliveTimeoutMs: 72000, databaseUrl: null, databasePoolSize: 10, databaseStatementTimeoutMs: 10000, heapGrowingPercent: 50, cacheIdleMs: 600_000 });
  });

  it('selects PostgreSQL with DATABASE_URL and its pool and timeout settings', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://app:pw@db:5432/probnes?sslmode=verify-full', DATABASE_POOL_SIZE: '25', DATABASE_STATEMENT_TIMEOUT_MS: '2000' }, '/srv');
    expect(c).toMatchObject({ databaseUrl: 'postgres://app:pw@db:5432/probnes?sslmode=verify-full', databasePoolSize: 25, databaseStatementTimeoutMs: 2000 });
  });

  it('rejects a DATABASE_URL that is not PostgreSQL or has an unknown sslmode, without echoing it (it may hold a password)', () => {
    const [notPg] = problemsOf({ DATABASE_URL: 'mysql://u:secret@h/db' });
    expect(notPg).toMatch(/^DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(notPg).not.toMatch(/secret/);
    expect(problemsOf({ DATABASE_URL: 'postgres://u:secret@h/db?sslmode=always' })[0]).toMatch(/^DATABASE_URL: its sslmode must be one of disable, prefer, require, verify-ca, verify-full, no-verify$/);
    expect(problemsOf({ DATABASE_POOL_SIZE: '0' })[0]).toMatch(/^DATABASE_POOL_SIZE: must be an integer from 1 to 1000/);
  });

  it('CACHE_IDLE_MS: 0 turns idle expiry off, a limit of a second or more is taken as given', () => {
    expect(loadConfig({ CACHE_IDLE_MS: '0' }).cacheIdleMs).toBe(0);
    expect(loadConfig({ CACHE_IDLE_MS: '1000' }).cacheIdleMs).toBe(1000);
    expect(loadConfig({ CACHE_IDLE_MS: '60000' }).cacheIdleMs).toBe(60_000);
  });

  it('keeps :memory: as is and treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_PATH: ':memory:', PORT: '' }).databasePath).toBe(':memory:');
    expect(loadConfig({ PORT: '' }).port).toBe(8080);
  });

  it('returns a frozen object', () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => {
      (c as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it.each([
    [{ PORT: 'eighty' }, /^PORT: must be an integer from 0 to 65535 \(got "eighty"\)$/],
    [{ PORT: '70000' }, /^PORT: must be an integer from 0 to 65535/],
    [{ PORT: '80.5' }, /^PORT: must be an integer/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)$/],
    [{ BODY_LIMIT: '10' }, /^BODY_LIMIT: must be an integer from 1024 to 104857600/],
    [{ HEAP_GROWING_PERCENT: '-5' }, /^HEAP_GROWING_PERCENT: must be an integer from 0 to 300 \(got "-5"\)$/],
    [{ HEAP_GROWING_PERCENT: '301' }, /^HEAP_GROWING_PERCENT: must be an integer from 0 to 300/],
    [{ CACHE_IDLE_MS: '500' }, /^CACHE_IDLE_MS: must be 0 \(off\) or an integer from 1000 to 2592000000 \(got "500"\)$/],
    [{ CACHE_IDLE_MS: '-1' }, /^CACHE_IDLE_MS: must be 0 \(off\) or an integer from 1000 to 2592000000/],
    [{ CACHE_IDLE_MS: '10m' }, /^CACHE_IDLE_MS: must be 0 \(off\) or an integer from 1000 to 2592000000/],
    [{ CACHE_IDLE_MS: '2592000001' }, /^CACHE_IDLE_MS: must be 0 \(off\) or an integer/],
    [{ REQUEST_TIMEOUT_MS: '-1' }, /^REQUEST_TIMEOUT_MS: must be an integer from 0/],
    [{ LOG_PRETTY: 'yes' }, /^LOG_PRETTY: must be one of auto, true, false/],
    [{ ENGINE_QUEUE_PER_TENANT: '0' }, /^ENGINE_QUEUE_PER_TENANT: must be an integer from 1 to 10000/],
    [{ STUDY_COST_MAX: '1e9' }, /^STUDY_COST_MAX: must be an integer from 1/],
  ])('rejects %o naming the variable and what is allowed', (env, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'x', LOG_LEVEL: 'y' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['LOG_LEVEL', 'PORT']);
  });
});
