import fs from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { openApiYaml } from '../../src/http/openapi.js';
import { makeTestApp } from '../helpers/app.js';

const CHECKED_IN = path.resolve(import.meta.dirname, '../../openapi/openapi.yaml');

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await makeTestApp());
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

type Operation = { summary?: string; tags?: string[]; requestBody?: unknown; responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown }> }> };

describe('OpenAPI', () => {
  it('openapi/openapi.yaml is what the routes produce (run `npm run openapi` after changing a route)', () => {
    expect(fs.readFileSync(CHECKED_IN, 'utf8')).toBe(openApiYaml(app));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = YAML.parse(openApiYaml(app));
    const api = await SwaggerParser.validate(doc);
    expect((api as { openapi?: string }).openapi).toBe('3.1.0');
  });

  it('is served at /openapi.json and documents every public route with a summary, tags and an example', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { examples?: unknown[] }> } };
    const ops = Object.entries(doc.paths).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ id: `${m.toUpperCase()} ${p}`, op })));
    expect(ops.map((o) => o.id).sort()).toEqual([
      'DELETE /v1/studies/{study_id}',
      'GET /healthz',
      'GET /readyz',
      'GET /v1/methods',
      'GET /v1/studies',
      'GET /v1/studies/{study_id}',
      'GET /v1/studies/{study_id}/best',
      'GET /v1/studies/{study_id}/distribution',
      'GET /v1/studies/{study_id}/export',
      'GET /v1/studies/{study_id}/front',
      'GET /v1/studies/{study_id}/front/history',
      'GET /v1/studies/{study_id}/history',
      'GET /v1/studies/{study_id}/intermediate_values',
      'GET /v1/studies/{study_id}/model/grid',
      'GET /v1/studies/{study_id}/model/importance',
      'GET /v1/studies/{study_id}/suggestions',
      'GET /v1/studies/{study_id}/trials',
      'GET /v1/studies/{study_id}/trials/{trial_id}',
      'PATCH /v1/studies/{study_id}',
      'POST /v1/studies',
      'POST /v1/studies/import',
      'POST /v1/studies/{study_id}/observations',
      'POST /v1/studies/{study_id}/trials/{trial_id}/abandon',
      'POST /v1/studies/{study_id}/trials/{trial_id}/fail',
      'POST /v1/studies/{study_id}/trials/{trial_id}/heartbeat',
      'POST /v1/studies/{study_id}/trials/{trial_id}/intermediate',
    ]);
    const text = (x: unknown) => JSON.stringify(x);
    for (const { id, op } of ops) {
      expect(op.summary, id).toBeTruthy();
      expect(op.tags?.length, id).toBeGreaterThan(0);
      // An example in the request body or a response, directly or through a named schema.
      const refs = [...text(op.responses).matchAll(/#\/components\/schemas\/(\w+)/g)].map((m) => doc.components.schemas[m[1]!]);
      const hasExample = /"examples?":/.test(text(op.requestBody)) || /"examples?":/.test(text(op.responses)) || refs.some((s) => s?.examples?.length);
      expect(hasExample, `${id} has no example`).toBe(true);
    }
  });

  it('lists the retryable 503 database_unavailable on every API route, keeping a route\'s own 503 text', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation & { responses: Record<string, { description?: string; headers?: Record<string, unknown> }> }>> };
    const api = Object.entries(doc.paths).filter(([p]) => p.startsWith('/v1/'));
    expect(api.length).toBeGreaterThan(10);
    for (const [p, methods] of api) {
      for (const [m, op] of Object.entries(methods)) {
        const r = op.responses['503'];
        expect(r?.description, `${m} ${p}`).toMatch(/database_unavailable/);
        expect(r?.headers?.['Retry-After'], `${m} ${p}`).toBeDefined();
        expect(Object.keys(r?.content ?? {}), `${m} ${p}`).toEqual(['application/problem+json']);
      }
    }
    // The suggestions route documents its own 503 causes too (engine_error, concurrent_update).
    expect(doc.paths['/v1/studies/{study_id}/suggestions']!.get!.responses['503']!.description).toMatch(/engine_error.*database_unavailable/s);
    // Probes are not API routes: /healthz has no 503, /readyz keeps its not_ready one.
    expect(doc.paths['/healthz']!.get!.responses['503']).toBeUndefined();
    expect(doc.paths['/readyz']!.get!.responses['503']!.description).toMatch(/not_ready/);
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger-ui/i);
  });
});
