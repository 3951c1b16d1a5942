/**
 * The process: read the configuration, open the database (migrating it), listen, and shut down
 * gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the database,
 * exit 0). Everything else is in buildApp.
 */
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createEngineRunner } from './domain/index.js';
import { PostgresStorage, SqliteStorage, type Storage } from './storage/index.js';
import { openBindingRefusal } from './bind-policy.js';
import { createLogger } from './logger.js';
import { applyHeapPolicy } from './heap-policy.js';

/** PostgreSQL when DATABASE_URL is set (migrated under an advisory lock), else the SQLite file. */
async function openStorage(config: Config): Promise<Storage> {
  if (!config.databaseUrl) return SqliteStorage.open(config.databasePath);
  return PostgresStorage.open({ url: config.databaseUrl, poolSize: config.databasePoolSize, statementTimeoutMs: config.databaseStatementTimeoutMs });
}

/** The database for logs, without the URL's password. */
function databaseName(config: Config): string {
  if (!config.databaseUrl) return config.databasePath;
  const u = new URL(config.databaseUrl);
  u.password = '';
  return u.toString();
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`probnes-server: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  // Before anything sizable is allocated: the heaps' growth is bounded by what they hold, not by the allocation rate.
  applyHeapPolicy(config.heapGrowingPercent);

  const logger = createLogger(config);
  let storage: Storage;
  try {
    storage = await openStorage(config);
  } catch (err) {
    logger.fatal({ err, database: databaseName(config) }, `cannot open the database: ${(err as Error).message}`);
    logger.flush();
    process.exit(1);
  }

  // Keys from the environment need their tenants to exist before studies can reference them.
  for (const k of config.apiKeys) await storage.ensureTenant(k.tenantId, new Date().toISOString());
  // Started with keys, the database stays keyed: a restart without API_KEYS does not run open.
  if (config.apiKeys.length > 0) await storage.markKeyed();
  // Keyed stays keyed when its last key is revoked (fail closed); `probnes keys open --confirm` re-opens.
  const hasKeys = config.apiKeys.length > 0 || (await storage.isKeyed());
  const refusal = openBindingRefusal(config.host, hasKeys, config.allowInsecureOpen);
  if (refusal) {
    process.stderr.write(`probnes-server: ${refusal}\n`);
    await storage.close();
    process.exit(1);
  }
  if (!hasKeys) logger.warn({ host: config.host }, 'no API keys configured: running open, every request acts as the default tenant');
  else if (config.apiKeys.length === 0 && !(await storage.hasActiveApiKeys())) {
    logger.warn('keyed, but every key is revoked: every /v1 request gets 401 until a key is created (probnes keys create) or the server is opened again (probnes keys open --confirm)');
  }

  const engine = createEngineRunner(config.engineWorkers);
  // Started with keys: never open, even if every key is revoked later. Started without: open until a key exists.
  const app = await buildApp({ config, storage, logger, engine, auth: { envKeys: config.apiKeys, allowOpen: !hasKeys } });
  let shuttingDown = false;

  async function shutdown(signal: string): Promise<void> {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal during shutdown: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const timer = setTimeout(() => {
      logger.error({ timeout_ms: config.shutdownTimeoutMs }, 'in-flight requests did not finish in time; closing anyway');
      app.server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    timer.unref();
    let code = 0;
    try {
      await app.close();
    } catch (err) {
      logger.error({ err }, 'error while closing the HTTP server');
      code = 1;
    }
    clearTimeout(timer);
    try {
      await engine.close();
    } catch (err) {
      logger.error({ err }, 'error while stopping the engine workers');
      code = 1;
    }
    try {
      await storage.close();
    } catch (err) {
      logger.error({ err }, 'error while closing the database');
      code = 1;
    }
    logger.info({ exit_code: code }, 'stopped');
    logger.flush();
    process.exit(code);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    logger.fatal({ err }, `cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`);
    await engine.close();
    await storage.close();
    logger.flush();
    process.exit(1);
  }
  logger.info({ database: databaseName(config), engine_workers: config.engineWorkers }, 'ready');
}

void main();
