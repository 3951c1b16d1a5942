/** GET /v1/methods: every method of the registry with its facts, the default first. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_METHOD, METHOD_NAMES, getStrategy, methodFacts } from '../../src/engine/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await makeTestApp());
});
afterAll(async () => {
  await app.close();
});

describe('GET /v1/methods', () => {
  it('lists every method once, the default first, with the registry\'s facts', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/methods' });
    expect(res.statusCode).toBe(200);
    const { methods } = res.json() as { methods: Record<string, unknown>[] };
    expect(methods.map((m) => m.name).sort()).toEqual([...METHOD_NAMES].sort());
    expect(methods[0]).toMatchObject({ name: DEFAULT_METHOD, default: true });
    expect(methods.filter((m) => m.default)).toHaveLength(1);
    for (const m of methods) {
      const name = m.name as (typeof METHOD_NAMES)[number];
      const facts = methodFacts(name);
      expect(m).toEqual({
        name,
        default: name === DEFAULT_METHOD,
        family: facts.family,
        has_model: facts.hasModel,
        ranks_generation: facts.ranksGeneration,
        search_distribution: facts.searchDistribution,
        min_batch_size: getStrategy(name).minBatch,
        categorical: getStrategy(name).categorical === true,
        multi_objective: facts.multiObjective,
        constraints: facts.constraints,
      });
    }
  });

  it('min_batch_size is what POST /v1/studies enforces', async () => {
    const { methods } = (await app.inject({ method: 'GET', url: '/v1/methods' })).json() as { methods: { name: string; min_batch_size: number }[] };
    for (const m of methods.filter((x) => x.min_batch_size > 1)) {
      const below = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: m.name, batch_size: m.min_batch_size - 1 }) });
      expect(below.statusCode, m.name).toBe(400);
      const at = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: m.name, batch_size: m.min_batch_size }) });
      expect(at.statusCode, m.name).toBe(201);
    }
  });
});
