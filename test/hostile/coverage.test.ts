/**
 * Every route of the OpenAPI document has a hostile test (named with `route(...)` in this folder),
 * and the document's security contract is what the server does: the bearer scheme and a 401 on
 * every route that needs a key, a 429 on every rate-limited route, nothing of the kind on the probes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hashApiKey } from '../../src/domain/auth/api-keys.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { expectProblem } from './harness.js';

type Responses = Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
type Operation = { security?: Record<string, string[]>[]; responses: Responses };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { securitySchemes?: Record<string, { type: string; scheme: string }> } };

const KEY = 'pnk_' + 'k'.repeat(40);
let app: FastifyInstance;
let storage: Storage;
let doc: Doc;
let ops: { id: string; method: string; path: string; op: Operation }[];

beforeAll(async () => {
  storage = SqliteStorage.open(':memory:');
  await storage.ensureTenant('t1', new Date().toISOString());
  app = await buildApp({
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 2 },
    storage,
    logger: false,
    auth: { envKeys: [{ tenantId: 't1', keyHash: hashApiKey(KEY) }], allowOpen: false },
  });
  doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  ops = Object.entries(doc.paths).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ id: `${m.toUpperCase()} ${p}`, method: m.toUpperCase(), path: p, op })));
});
afterAll(async () => {
  await app.close();
  await storage.close();
});

describe('hostile-test coverage', () => {
  it('every documented route is named by exactly one hostile test, and no test names a route that does not exist', () => {
    const dir = import.meta.dirname;
    const named = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts'))
      .flatMap((f) => {
        const text = fs.readFileSync(path.join(dir, f), 'utf8');
        // Literal names, and the ones built in loops over the trial actions, reports and probes.
        const literal = [...text.matchAll(/route\('([A-Z]+ [^']+)'\)/g)].map((m) => m[1]!);
        const templated = [...text.matchAll(/for \(const (\w+) of \[([^\]]+)\] as const\) \{\s*describe\(route\(`([^`]+)`\)/g)].flatMap((m) =>
          [...m[2]!.matchAll(/'([^']+)'/g)].map((v) => m[3]!.replace('${' + m[1] + '}', v[1]!)),
        );
        return [...literal, ...templated];
      });
    expect(ops.length).toBeGreaterThan(0);
    expect([...named].sort()).toEqual(ops.map((o) => o.id).sort());
  });
});

describe('OpenAPI security contract', () => {
  const fill = (p: string) => p.replace('{study_id}', 'study-x').replace('{trial_id}', '1');
  const PROBES = new Set(['GET /healthz', 'GET /readyz']);

  it('declares the bearer scheme', () => {
    expect(doc.components.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('applies it, with a problem+json 401, to exactly the routes that answer 401 without a key', async () => {
    for (const [i, o] of ops.entries()) {
      const protectedInDoc = o.op.security?.some((s) => 'bearer' in s) ?? false;
      expect(protectedInDoc, o.id).toBe(!PROBES.has(o.id));
      // Requests without a key are rate-limited per client address: one address per route here.
      const req = { method: o.method as 'GET', url: fill(o.path), remoteAddress: `10.0.0.${i + 1}` };
      const res = await app.inject(req);
      if (protectedInDoc) {
        expect(res.statusCode, o.id).toBe(401);
        expectProblem(req, res);
        expect(res.headers['www-authenticate'], o.id).toMatch(/^Bearer /);
        expect(Object.keys(o.op.responses['401']?.content ?? {}), o.id).toEqual(['application/problem+json']);
        expect(o.op.responses['401']?.headers, o.id).toHaveProperty('WWW-Authenticate');
      } else {
        expect(o.op.security, o.id).toEqual([]);
        expect(res.statusCode, o.id).not.toBe(401);
        expect(o.op.responses['401'], o.id).toBeUndefined();
      }
    }
  });

  it('documents a problem+json 429 with Retry-After on exactly the routes the rate limiter counts', async () => {
    // The limit is 2 per minute per client: the request above and one more pass, the third is refused.
    for (const o of ops) {
      const req = { method: o.method as 'GET', url: fill(o.path), headers: { authorization: `Bearer ${KEY}` } };
      let res = await app.inject(req);
      for (let i = 0; i < 2 && res.statusCode !== 429; i++) res = await app.inject(req);
      const limited = res.statusCode === 429;
      expect(limited, o.id).toBe(!PROBES.has(o.id));
      expect(o.op.responses['429'] !== undefined, o.id).toBe(limited);
      if (limited) {
        expectProblem(req, res);
        expect(res.headers['retry-after'], o.id).toBeDefined();
        expect(o.op.responses['429']?.headers, o.id).toHaveProperty('Retry-After');
      }
    }
  });
});
