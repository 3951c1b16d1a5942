import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';
import { commit, createStudy, fakeEngineState, stamp, trialAt, type CreatedStudy } from '../helpers/study-data.js';

let app: FastifyInstance;
let storage: Storage;
let study: CreatedStudy;

beforeEach(async () => {
  ({ app, storage } = await makeTestApp());
  // Lets a test act as another tenant (authentication will set tenantId from the API key).
  app.addHook('onRequest', async (req) => {
    if (typeof req.headers['x-tenant'] === 'string') req.tenantId = req.headers['x-tenant'];
  });
  study = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
  const state = fakeEngineState(study, 1, [0, 0], [[1, 0], [0, 1]]);
  const done = stamp();
  await commit(storage, study.id, 1, state, [
    trialAt(study, { x: 1, lr: 0.01 }, { state: 'COMPLETED', generation: 0, source: 'suggested', clientId: 'w1', value: 3.5, stderr: 0.1, completedAt: done }),
    trialAt(study, { x: 2, lr: 0.02 }, { state: 'ACTIVE', generation: 0, source: 'suggested', clientId: 'w2', leaseExpiresAt: '2025-01-02T01:00:00.000Z' }),
    trialAt(study, { x: 3, lr: 0.03 }, { state: 'REQUESTED', generation: 1, source: 'suggested' }),
    trialAt(study, { x: 4, lr: 0.04 }, { state: 'COMPLETED', generation: 1, source: 'external', value: 1.25, completedAt: done }),
    trialAt(study, { x: 5, lr: 0.05 }, { state: 'REQUESTED', generation: 1, source: 'suggested' }),
  ]);
});
afterEach(async () => {
  await app.close();
});

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

describe('GET /v1/studies/{id}/trials', () => {
  it('lists every trial by ascending id with the Trial resource fields', async () => {
    const res = await get(`/v1/studies/${study.id}/trials`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.next_page_token).toBeNull();
    expect(body.trials.map((t: { trial_id: number }) => t.trial_id)).toEqual([1, 2, 3, 4, 5]);
    expect(body.trials[0]).toEqual({
      trial_id: 1,
      state: 'COMPLETED',
      parameters: { x: 1, lr: 0.01 },
      generation: 0,
      client_id: 'w1',
      lease_expires_at: null,
      value: 3.5,
      stderr: 0.1,
      failure_reason: null,
      late: false,
      source: 'suggested',
      created_at: expect.any(String),
      completed_at: expect.any(String),
      stopped: false,
      loss: 3.5,
      values: [3.5],
      constraints: null,
      infeasible: false,
      feasible: true,
      losses: [3.5],
    });
    expect(body.trials[1]).toMatchObject({ state: 'ACTIVE', client_id: 'w2', lease_expires_at: '2025-01-02T01:00:00.000Z', value: null, completed_at: null });
    // The internal point is not part of the public resource (it is in the export).
    expect(body.trials[0]).not.toHaveProperty('point');
  });

  it('filters by state', async () => {
    const res = await get(`/v1/studies/${study.id}/trials?state=COMPLETED`);
    expect(res.json().trials.map((t: { trial_id: number }) => t.trial_id)).toEqual([1, 4]);
    expect((await get(`/v1/studies/${study.id}/trials?state=FAILED`)).json()).toEqual({ trials: [], next_page_token: null });
  });

  it('pages with page_size and next_page_token until null, and the token keeps the filter', async () => {
    const seen: number[] = [];
    let url = `/v1/studies/${study.id}/trials?page_size=2`;
    for (let pages = 0; pages < 10; pages++) {
      const body = (await get(url)).json();
      seen.push(...body.trials.map((t: { trial_id: number }) => t.trial_id));
      if (!body.next_page_token) break;
      expect(body.trials).toHaveLength(2);
      url = `/v1/studies/${study.id}/trials?page_size=2&page_token=${encodeURIComponent(body.next_page_token)}`;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);

    const first = (await get(`/v1/studies/${study.id}/trials?state=REQUESTED&page_size=1`)).json();
    expect(first.trials[0].trial_id).toBe(3);
    const second = (await get(`/v1/studies/${study.id}/trials?state=REQUESTED&page_size=1&page_token=${first.next_page_token}`)).json();
    expect(second).toMatchObject({ trials: [{ trial_id: 5 }], next_page_token: null });
  });

  it('400 invalid_page_token for a tampered token, or one from another listing', async () => {
    const token: string = (await get(`/v1/studies/${study.id}/trials?page_size=1`)).json().next_page_token;
    const [body, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, scope: `trials:${study.id}:*`, after: '0' })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${body}.${sig!.slice(1)}A`, 'garbage']) {
      const res = await get(`/v1/studies/${study.id}/trials?page_token=${encodeURIComponent(bad)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_page_token', status: 400 });
    }
    // Valid, but issued for the unfiltered listing.
    expect((await get(`/v1/studies/${study.id}/trials?state=REQUESTED&page_token=${token}`)).json().code).toBe('invalid_page_token');
  });

  it('400 for a bad state or page_size, with where the field is', async () => {
    const res = await get(`/v1/studies/${study.id}/trials?state=DONE&page_size=0`);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { path: string; in: string }) => `${e.in}${e.path}`).sort()).toEqual(['querystring/page_size', 'querystring/state']);
  });

  it('404 for an unknown study and for another tenant\'s study', async () => {
    expect((await get('/v1/studies/nope/trials')).json()).toMatchObject({ status: 404, code: 'study_not_found' });
    expect((await get(`/v1/studies/${study.id}/trials`, { 'x-tenant': 'other' })).json()).toMatchObject({ status: 404, code: 'study_not_found' });
  });
});

describe('GET /v1/studies/{id}/trials/{trial_id}', () => {
  it('returns one trial', async () => {
    const res = await get(`/v1/studies/${study.id}/trials/4`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ trial_id: 4, state: 'COMPLETED', source: 'external', value: 1.25, parameters: { x: 4, lr: 0.04 } });
  });

  it('404 trial_not_found, 404 study_not_found (unknown or other tenant), 400 for a non-integer id', async () => {
    expect((await get(`/v1/studies/${study.id}/trials/99`)).json()).toMatchObject({ status: 404, code: 'trial_not_found' });
    expect((await get('/v1/studies/nope/trials/1')).json()).toMatchObject({ status: 404, code: 'study_not_found' });
    expect((await get(`/v1/studies/${study.id}/trials/1`, { 'x-tenant': 'other' })).json()).toMatchObject({ status: 404, code: 'study_not_found' });
    for (const bad of ['abc', '0', '1.5']) {
      const res = await get(`/v1/studies/${study.id}/trials/${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ path: '/trial_id', in: 'params' });
    }
  });
});
