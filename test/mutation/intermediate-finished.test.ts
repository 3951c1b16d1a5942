/**
 * A finished trial's intermediate report (src/domain/trials/intermediate.ts) is answered only as the
 * retry of a report it made while it ran: same trial, same step, same value. The stored value is
 * found by one index seek (the first value after (trial, step − 1)); matching that value's step was
 * never tested, because every test's finished trial had no value after the reported step. A report at
 * a step the trial never reported, lying between two it did, or below another trial's, must be
 * refused with trial_not_active, not answered from the next stored value under mutation testing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

async function suggest(id: string, client: string): Promise<number> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=${client}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().trials[0].trial_id as number;
}
const report = (id: string, trial: number, step: number, value: number) => app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${trial}/intermediate`, payload: { step, value } });
async function observe(id: string, trial: number, value: number) {
  const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: trial, value }] } });
  expect(res.statusCode, res.body).toBe(200);
}

describe('a finished trial\'s reports', () => {
  it('a step between two reported ones is refused (trial_not_active), whatever its value; the reported steps are answered again', async () => {
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', batch_size: 1 }) });
    const id = created.json().id as string;
    const t = await suggest(id, 'w');
    for (const [step, value] of [[0, 3], [4, 2]] as const) expect((await report(id, t, step, value)).statusCode).toBe(200);
    await observe(id, t, 2);
    // Step 2 was never reported; the next stored value of the trial is step 4's (2).
    for (const value of [2, 2.5]) {
      const late = await report(id, t, 2, value);
      expect(late.statusCode, `step 2 value ${value}: ${late.body}`).toBe(409);
      expect(late.json().code).toBe('trial_not_active');
    }
    // The retries of what it reported while running are answered, with their own step.
    for (const [step, value] of [[0, 3], [4, 2]] as const) {
      const again = await report(id, t, step, value);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json()).toMatchObject({ step, value, should_stop: false, reason: 'trial_finished' });
    }
  });

  it('a step the finished trial never reported is refused even when the next stored value is another trial\'s at that step', async () => {
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', batch_size: 1 }) });
    const id = created.json().id as string;
    const t = await suggest(id, 'w');
    const u = await suggest(id, 'v');
    expect(u).toBeGreaterThan(t);
    expect((await report(id, t, 0, 5)).statusCode).toBe(200);
    expect((await report(id, u, 1, 5)).statusCode).toBe(200);
    await observe(id, t, 5);
    // After (t, 0) comes (u, 1): same step and value as the late report of t at step 1.
    const late = await report(id, t, 1, 5);
    expect(late.statusCode, late.body).toBe(409);
    expect(late.json().code).toBe('trial_not_active');
  });
});
