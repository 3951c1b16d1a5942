/** POST /observations: validation, atomicity, idempotency, external points, error codes. */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { braninStudy, loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
let id: string;
beforeEach(async () => {
  ({ app } = await loopApp());
  const body = braninStudy('cmaes', { parameters: [{ name: 'x1', bounds: [-5, 10] }, { name: 'x2', bounds: [0, 15] }, { name: 'n', type: 'int', bounds: [1, 8] }] });
  id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: body })).json().id;
});
afterEach(async () => {
  await app.close();
});

const suggest = async (count = 3, client = 'w') => (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}&client_id=${client}` })).json();
const observe = (observations: unknown[], study = id) => app.inject({ method: 'POST', url: `/v1/studies/${study}/observations`, payload: { observations } });
const trials = async () => (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json().trial_counts;

describe('observations', () => {
  it('records results and echoes the trials in request order with the generation', async () => {
    const s = await suggest(2);
    const res = await observe([{ trial_id: s.trials[1].trial_id, value: 2, stderr: 0.1 }, { trial_id: s.trials[0].trial_id, value: 1 }]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ generation: 0, study_state: 'ACTIVE', trials: [{ trial_id: 2, state: 'COMPLETED', value: 2, stderr: 0.1, lease_expires_at: null, client_id: 'w' }, { trial_id: 1, value: 1, stderr: null }] });
  });

  it('is idempotent: an identical repeat is a no-op 200; a different value or stderr is 409 trial_already_completed', async () => {
    const s = await suggest(1);
    const t = s.trials[0].trial_id;
    expect((await observe([{ trial_id: t, value: 1.5, stderr: 0.2 }])).statusCode).toBe(200);
    const again = await observe([{ trial_id: t, value: 1.5, stderr: 0.2 }]);
    expect(again.statusCode).toBe(200);
    expect(again.json().trials[0]).toMatchObject({ trial_id: t, value: 1.5, stderr: 0.2 });
    for (const o of [{ trial_id: t, value: 1.6, stderr: 0.2 }, { trial_id: t, value: 1.5 }]) {
      const res = await observe([o]);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('trial_already_completed');
    }
  });

  it('is atomic: one bad entry and nothing is written', async () => {
    const s = await suggest(3);
    const [a, b] = s.trials.map((t: { trial_id: number }) => t.trial_id);
    expect((await observe([{ trial_id: a, value: 1 }, { trial_id: 999, value: 2 }])).json().code).toBe('trial_not_found');
    expect((await observe([{ trial_id: a, value: 1 }, { parameters: { x1: 11, x2: 0, n: 1 }, value: 2 }])).statusCode).toBe(400);
    await observe([{ trial_id: b, value: 5 }]);
    expect((await observe([{ trial_id: a, value: 1 }, { trial_id: b, value: 6 }])).json().code).toBe('trial_already_completed');
    expect(await trials()).toMatchObject({ COMPLETED: 1, ACTIVE: 2 });
  });

  it('rejects duplicates, non-finite values, bad stderr, unknown fields and empty or oversized batches with 400 validation_failed', async () => {
    const s = await suggest(1);
    const t = s.trials[0].trial_id;
    const dup = await observe([{ trial_id: t, value: 1 }, { trial_id: t, value: 1 }]);
    expect(dup.statusCode).toBe(400);
    expect(dup.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/observations/1/trial_id' }] });
    // JSON has no NaN or Infinity: a client library may still send 1e400 (parsed as Infinity) or a string.
    const raw = (obs: string) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, headers: { 'content-type': 'application/json' }, payload: `{"observations": ${obs}}` });
    expect((await raw(`[{"trial_id": ${t}, "value": 1e400}]`)).statusCode).toBe(400);
    expect((await raw(`[{"trial_id": ${t}, "value": -1e400}]`)).statusCode).toBe(400);
    for (const bad of [[{ trial_id: t, value: 'NaN' }], [{ trial_id: t, value: null }], [{ trial_id: t, value: 1, stderr: -1 }], [{ trial_id: t, value: 1, extra: 1 }], [], [{ trial_id: 0, value: 1 }], [{ trial_id: 1.5, value: 1 }]]) {
      const res = await observe(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    const many = Array.from({ length: 1001 }, (_, i) => ({ trial_id: i + 1, value: 1 }));
    expect((await observe(many)).statusCode).toBe(400);
    expect(await trials()).toMatchObject({ COMPLETED: 0 });
  });

  it('takes external points by parameters: every parameter, no extra, inside bounds, ints integral', async () => {
    const res = await observe([{ parameters: { x1: 1, x2: 2, n: 3 }, value: 4 }, { parameters: { x1: -5, x2: 15, n: 8 }, value: 5, stderr: 0 }]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().trials).toMatchObject([
      { trial_id: 1, state: 'COMPLETED', source: 'external', parameters: { x1: 1, x2: 2, n: 3 }, value: 4, generation: 0 },
      { trial_id: 2, source: 'external', stderr: 0 },
    ]);
    const bad = await observe([{ parameters: { x1: 1, x2: 2 }, value: 1 }, { parameters: { x1: 1, x2: 2, n: 2.5 }, value: 1 }, { parameters: { x1: 1, x2: 16, n: 1 }, value: 1 }, { parameters: { x1: 1, x2: 2, n: 1, y: 0 }, value: 1 }]);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string }) => e.path)).toEqual(['/observations/0/parameters/n', '/observations/1/parameters/n', '/observations/2/parameters/x2', '/observations/3/parameters/y']);
    // External points do not count towards the generation's batch, but they are data.
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json()).toMatchObject({ generation: 0, trial_counts: { COMPLETED: 2 } });
  });

  it('404 for unknown studies and for trial ids of another study', async () => {
    const other = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes') })).json().id;
    const s = (await app.inject({ method: 'GET', url: `/v1/studies/${other}/suggestions?count=3` })).json();
    expect(s.trials.map((t: { trial_id: number }) => t.trial_id)).toEqual([1, 2, 3]);
    const res = await observe([{ trial_id: 1, value: 1 }]);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('trial_not_found');
    expect((await observe([{ trial_id: 1, value: 1 }], 'nope')).json().code).toBe('study_not_found');
  });

  it('409 trial_not_active for FAILED and ABANDONED trials', async () => {
    const s = await suggest(2);
    const [a, b] = s.trials.map((t: { trial_id: number }) => t.trial_id);
    await app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${a}/fail`, payload: { reason: 'oom' } });
    await app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${b}/abandon` });
    for (const t of [a, b]) {
      const res = await observe([{ trial_id: t, value: 1 }]);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('trial_not_active');
    }
  });
});
