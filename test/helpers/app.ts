/** Build the app over a fresh in-memory database, with a deterministic clock, ids and seeds. */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';

export interface TestApp {
  app: FastifyInstance;
  storage: Storage;
}

export async function makeTestApp(opts: { storage?: Storage; logger?: Logger; bodyLimit?: number } = {}): Promise<TestApp> {
  const storage = opts.storage ?? SqliteStorage.open(':memory:');
  let tick = 0;
  let id = 0;
  const app = await buildApp({
    config: { bodyLimit: opts.bodyLimit ?? 1024 * 1024, requestTimeoutMs: 30_000 },
    storage,
    logger: opts.logger ?? false,
    service: {
      // One millisecond per call keeps timestamps distinct and ordered.
      now: () => new Date(Date.UTC(2025, 0, 1, 12, 0, 0, tick++)),
      newId: () => `study-${String(++id).padStart(4, '0')}`,
      newSeed: () => 12345,
    },
  });
  return { app, storage };
}

/** A request that must succeed: its JSON body, or an error naming the request and the answer (status ≥ 300). */
export async function injectOk(app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await app.inject({ method, url, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** A small valid create-study body; override fields per test. */
export function studyBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'quadratic',
    parameters: [
      { name: 'x', type: 'float', bounds: [-5, 5], prior: { mean: 1, std: 2 } },
      { name: 'lr', type: 'float', scale: 'log', bounds: [1e-5, 1] },
    ],
    ...overrides,
  };
}
