/**
 * A study whose distribution yields no new configuration is COMPLETED as converged only when nothing
 * is pending (src/domain/loop/no-repeat.ts): a pending trial's result can still move the
 * distribution, and the study must take that result and suggest again. Completing it while trials
 * were pending passed every test under mutation testing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeTestApp } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

const get = async (url: string) => {
  const res = await app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('converged with trials pending', () => {
  it('answers converged without completing the study while trials are pending; completes it once none is', async () => {
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'four', method: 'random', batch_size: 4, parameters: [{ name: 'k', type: 'int', bounds: [0, 3] }] } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    // Every configuration of the space is handed out, so all four are pending.
    const first = await get(`/v1/studies/${id}/suggestions?count=4&client_id=a`);
    const trials = first.trials as { trial_id: number; parameters: { k: number } }[];
    expect(trials.map((t) => t.parameters.k).sort()).toEqual([0, 1, 2, 3]);
    // Nothing new can be drawn: the answer says so, and the study stays open for the pending results.
    const none = await get(`/v1/studies/${id}/suggestions?count=1&client_id=b`);
    expect(none).toMatchObject({ trials: [], reason: 'converged' });
    const open = await get(`/v1/studies/${id}`);
    expect(open.state).not.toBe('COMPLETED');
    expect(open.trial_counts.REQUESTED + open.trial_counts.ACTIVE).toBe(4);
    // Three results arrive: one trial is still pending, the study is still open.
    const observe = (ts: typeof trials) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: ts.map((t) => ({ trial_id: t.trial_id, value: t.parameters.k })) } });
    expect((await observe(trials.slice(0, 3))).statusCode).toBe(200);
    expect(await get(`/v1/studies/${id}/suggestions?count=1&client_id=b`)).toMatchObject({ trials: [], reason: 'converged' });
    expect((await get(`/v1/studies/${id}`)).state).not.toBe('COMPLETED');
    // The last result: nothing pending and nothing new, so the study is COMPLETED as converged.
    expect((await observe(trials.slice(3))).statusCode).toBe(200);
    expect(await get(`/v1/studies/${id}/suggestions?count=1&client_id=b`)).toMatchObject({ trials: [], reason: 'converged' });
    expect(await get(`/v1/studies/${id}`)).toMatchObject({ state: 'COMPLETED', reason: 'converged' });
  });
});
