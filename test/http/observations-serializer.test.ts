/**
 * POST /observations writes its 200 answer with JSON.stringify, without the zod serializer the
 * other routes use (src/http/routes/observations.ts): the bytes must be exactly what the zod
 * serializer makes of the same answer (same keys, same order, nothing extra), for suggested and
 * external trials, a completed generation and a study completed by max_trials; error answers keep
 * their problem+json.
 */
import type { FastifyInstance } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObservationsSchema } from '../../src/http/schemas/loop.js';
import { braninStudy, loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await loopApp());
});
afterEach(async () => {
  await app.close();
});

const zodBytes = serializerCompiler({ schema: ObservationsSchema, method: 'POST', url: '/v1/studies/:study_id/observations', httpStatus: '200' } as never);

async function create(extra: Record<string, unknown>) {
  const body = braninStudy('random', { parameters: [{ name: 'x1', bounds: [-5, 10] }, { name: 'n', type: 'int', bounds: [1, 8] }], ...extra });
  return (await app.inject({ method: 'POST', url: '/v1/studies', payload: body })).json().id as string;
}

describe('observations response bytes', () => {
  it('equal the zod serializer\'s for suggested and external trials, through a generation update and max_trials', async () => {
    const id = await create({ batch_size: 2, max_trials: 4 });
    const s = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w` })).json();
    const answers = [
      await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: s.trials[0].trial_id, value: 1.25, stderr: 0.5 }] } }),
      // Completes generation 0 (an update) and adds an external point.
      await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: s.trials[1].trial_id, value: -3 }, { parameters: { x1: 2.5, n: 3 }, value: 7 }] } }),
      // The fourth result: the study completes.
      await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ parameters: { x1: -1, n: 8 }, value: 0 }] } }),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toBe(zodBytes(res.json()));
    }
    expect(answers[1]!.json()).toMatchObject({ generation: 1, trials: [{ source: 'suggested' }, { source: 'external', parameters: { x1: 2.5, n: 3 } }] });
    expect(answers[2]!.json().study_state).toBe('COMPLETED');
  });

  it('leaves error answers to the problem serializer', async () => {
    const id = await create({ batch_size: 1 });
    const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: 99, value: 1 }] } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 404, code: 'trial_not_found' });
  });
});
