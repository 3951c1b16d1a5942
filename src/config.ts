/**
 * Process configuration: the environment, parsed once at boot into a frozen Config.
 * A bad value stops the server with a message that names the variable and what it accepts, so a
 * typo in a deployment fails loudly instead of running with a silently different setting.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { apiKeysSchema, flagVar } from './config-api-keys.js';
import type { EnvApiKey } from './domain/auth/api-keys.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'] as const;

/**
 * An integer environment variable in [min, max], or also 0 with `off` (a setting 0 turns off); the
 * message says exactly what is allowed.
 */
function intVar(min: number, max: number, def: number, off = false) {
  const allowed = `${off ? '0 (off) or ' : ''}an integer from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, `must be ${allowed}`)
    .transform(Number)
    .pipe(z.number().int().refine((v) => (off && v === 0) || (v >= min && v <= max), `must be ${allowed}`))
    .default(def);
}

const envSchema = z.object({
  PORT: intVar(0, 65_535, 8080),
  // Loopback by default: with no API keys configured the server is open, so it must not face a network.
  HOST: z.string().trim().min(1, 'must be a host name or IP address').default('127.0.0.1'),
  DATABASE_PATH: z.string().trim().min(1, 'must be a file path, or :memory:').default('./data/probnes.db'),
  // Set: PostgreSQL (several replicas may share it) instead of the SQLite file at DATABASE_PATH.
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\/[^\s]+$/, 'must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database?sslmode=require)')
    .refine((v) => {
      const mode = /[?&]sslmode=([^&]*)/.exec(v)?.[1];
      return mode === undefined || SSL_MODES.includes(mode as (typeof SSL_MODES)[number]);
    }, `its sslmode must be one of ${['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'].join(', ')}`)
    .optional(),
  // Connections per replica (PostgreSQL only): the database's max_connections bounds replicas × this.
  DATABASE_POOL_SIZE: intVar(1, 1000, 10),
  // Longest a single statement may run (PostgreSQL only); a stuck one fails the request with a 503.
  DATABASE_STATEMENT_TIMEOUT_MS: intVar(100, 600_000, 10_000),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  BODY_LIMIT: intVar(1024, 100 * 1024 * 1024, 1024 * 1024),
  REQUEST_TIMEOUT_MS: intVar(0, 3_600_000, 30_000),
  SHUTDOWN_TIMEOUT_MS: intVar(100, 600_000, 10_000),
  LOG_PRETTY: z.enum(['auto', 'true', 'false'], { error: 'must be one of auto, true, false' }).default('auto'),
  // One core stays with the event loop (HTTP, SQLite); the others run GP fits. 0 = inline (no pool).
  ENGINE_WORKERS: intVar(0, 256, Math.max(1, os.availableParallelism() - 1)),
  // Fair engine time (docs/capacity.md): engine calls a tenant / a study may have queued or running,
  // the longest predicted wait before a call is refused with 429, and what counts as a light call.
  ENGINE_QUEUE_PER_TENANT: intVar(1, 10_000, 8),
  ENGINE_QUEUE_PER_STUDY: intVar(1, 1000, 2),
  ENGINE_QUEUE_MAX_WAIT_MS: intVar(0, 3_600_000, 10_000),
  ENGINE_LIGHT_MS: intVar(0, 60_000, 50),
  // Largest dimension × batch size × active set a study may have (checked at creation).
  STUDY_COST_MAX: intVar(1, 1e15, 100_000_000),
  // Keys for containers (see config-api-keys.ts); `probnes keys create` stores them in the database instead.
  API_KEYS: apiKeysSchema.optional(),
  API_KEYS_FILE: z.string().trim().min(1, 'must be a file path').optional(),
  // Without keys the server is open; it refuses a non-loopback HOST unless this says so explicitly.
  ALLOW_INSECURE_OPEN: flagVar('false'),
  // Per key (per client IP without one); 0 turns rate limiting off.
  RATE_LIMIT_PER_MINUTE: intVar(0, 10_000_000, 6000),
  // Per client for requests served without a key (open mode) from this machine; 0 = no limit. A loop
  // client with a cheap objective on its own machine is a single user, not a flood to defend against.
  RATE_LIMIT_OPEN_LOOPBACK_PER_MINUTE: intVar(0, 10_000_000, 0),
  // How far V8 lets the old generation grow past what a full collection left live, in % (docs/capacity.md,
  // "Memory: every cache bounded"); 0 leaves V8's own rule, which grows it up to 4× with the allocation rate and keeps it committed.
  HEAP_GROWING_PERCENT: intVar(0, 300, 50),
  // A study's cached data (study cache, model views, fronts, predictions) unused this long is dropped, so
  // that a server whose traffic stops gives the memory back (docs/capacity.md). 0: kept until evicted.
  CACHE_IDLE_MS: intVar(1000, 30 * 86_400_000, 10 * 60_000, true),
  // Idle socket timeout; longer than any handler (a GP fit) so it only reaps dead connections. 0 = none.
  CONNECTION_TIMEOUT_MS: intVar(0, 3_600_000, 120_000),
  // Above the usual 60 s idle timeout of load balancers, so they close idle connections first.
  KEEP_ALIVE_TIMEOUT_MS: intVar(1, 3_600_000, 72_000),
});

/** Variables whose values must never appear in an error message. */
const SECRET_VARIABLES = new Set(['API_KEYS', 'DATABASE_URL']);

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Absolute path of the SQLite file, or ':memory:' (unused when `databaseUrl` is set). */
  readonly databasePath: string;
  /** PostgreSQL connection URL (sslmode in its query string), or null for SQLite. */
  readonly databaseUrl: string | null;
  /** PostgreSQL connections per process. */
  readonly databasePoolSize: number;
  readonly databaseStatementTimeoutMs: number;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  /** Largest accepted request body, in bytes. */
  readonly bodyLimit: number;
  /** Time allowed to receive a whole request (0 disables). */
  readonly requestTimeoutMs: number;
  /** How long shutdown waits for in-flight requests before closing anyway. */
  readonly shutdownTimeoutMs: number;
  readonly logPretty: 'auto' | 'true' | 'false';
  /** Worker threads for engine calls (GP fits, acquisition); 0 runs them on the event loop. */
  readonly engineWorkers: number;
  /** Fair engine time: per-tenant and per-study queue bounds, longest queued wait, light-call threshold (ms). */
  readonly engineQueue: { readonly perTenant: number; readonly perStudy: number; readonly maxWaitMs: number; readonly lightMs: number };
  /** Largest study cost (dimension × batch × active set) accepted at creation. */
  readonly studyCostMax: number;
  /** Keys from API_KEYS and API_KEYS_FILE, already hashed. */
  readonly apiKeys: readonly EnvApiKey[];
  readonly allowInsecureOpen: boolean;
  /** Requests per minute per key (per IP without one); 0 = unlimited. */
  readonly rateLimitPerMinute: number;
  /** Requests per minute per client served open (no key) from a loopback address; 0 = unlimited. */
  readonly rateLimitOpenLoopbackPerMinute: number;
  readonly connectionTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** The old generation's growth past its live size between full collections, in %; 0 = V8's own rule. */
  readonly heapGrowingPercent: number;
  /** How long a study's cached data may go unused before the idle sweep drops it (ms); 0 = never. */
  readonly cacheIdleMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parse the environment (only the variables above are read; empty strings count as unset). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = String(i.path[0] ?? '?');
        return SECRET_VARIABLES.has(name) ? `${name}: ${i.message}` : `${name}: ${i.message} (got ${JSON.stringify(raw[name] ?? null)})`;
      }),
    );
  }
  const e = parsed.data;
  const apiKeys = [...(e.API_KEYS ?? []), ...(e.API_KEYS_FILE ? readKeysFile(path.resolve(cwd, e.API_KEYS_FILE)) : [])];
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    databasePath: e.DATABASE_PATH === ':memory:' ? ':memory:' : path.resolve(cwd, e.DATABASE_PATH),
    databaseUrl: e.DATABASE_URL ?? null,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    logPretty: e.LOG_PRETTY,
    engineWorkers: e.ENGINE_WORKERS,
    engineQueue: Object.freeze({ perTenant: e.ENGINE_QUEUE_PER_TENANT, perStudy: e.ENGINE_QUEUE_PER_STUDY, maxWaitMs: e.ENGINE_QUEUE_MAX_WAIT_MS, lightMs: e.ENGINE_LIGHT_MS }),
    studyCostMax: e.STUDY_COST_MAX,
    apiKeys: Object.freeze(apiKeys),
    allowInsecureOpen: e.ALLOW_INSECURE_OPEN === 'true',
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitOpenLoopbackPerMinute: e.RATE_LIMIT_OPEN_LOOPBACK_PER_MINUTE,
    connectionTimeoutMs: e.CONNECTION_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    heapGrowingPercent: e.HEAP_GROWING_PERCENT,
    cacheIdleMs: e.CACHE_IDLE_MS,
  });
}

function readKeysFile(file: string): EnvApiKey[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`API_KEYS_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
  }
  const parsed = apiKeysSchema.safeParse(text);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `API_KEYS_FILE (${file}): ${i.message}`));
  return parsed.data;
}

/** Variables, defaults and meaning, for the table of docs/configuration.md and `--help`-style output. */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);
