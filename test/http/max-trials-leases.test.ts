/**
 * max_trials and leases: the budget counts REQUESTED, ACTIVE and COMPLETED
 * trials, so trials leased and never reported hold it while the study stays ACTIVE. A suggestions
 * answer cut short by max_trials says which leases hold the rest (`budget`: counts, and the leases
 * with their clients and expiry, at most 100 listed); once a lease expires its trial goes back to
 * REQUESTED and the next asker gets it.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { braninStudy, clock, loopApp, type Clock } from '../helpers/loop.js';

type Lease = { trial_id: number; client_id: string; lease_expires_at: string };
type Budget = { max_trials: number; completed: number; leased: number; requested: number; leases: Lease[] } | null;
type Answer = { trials: { trial_id: number; client_id: string; state: string }[]; reason: string | null; budget: Budget };

let app: FastifyInstance;
let id: string;
let t: Clock;
afterEach(async () => {
  await app.close();
});

async function setup(body: Record<string, unknown>) {
  t = clock();
  ({ app } = await loopApp({ clock: t }));
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('random', { lease_seconds: 60, ...body }) });
  expect(res.statusCode, res.body).toBe(201);
  id = res.json().id;
}

async function suggest(count: number, client: string): Promise<Answer> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}&client_id=${client}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Answer;
}

async function observe(trialIds: number[]) {
  const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: trialIds.map((n) => ({ trial_id: n, value: n })) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { study_state: string };
}

const ids = (a: Answer) => a.trials.map((x) => x.trial_id);
const studyState = async () => (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json().state as string;

describe('max_trials and leases', () => {
  it('3 of 30 leased and never reported: the ask names the leases and their client; after expiry the next asker gets them', async () => {
    await setup({ batch_size: 3, max_trials: 30 });
    const held = await suggest(3, 'worker-a');
    expect(ids(held)).toEqual([1, 2, 3]);
    for (let i = 0; i < 9; i++) {
      const got = await suggest(3, 'worker-b');
      expect(got).toMatchObject({ reason: null, budget: null });
      expect(got.trials).toHaveLength(3);
      await observe(ids(got));
    }
    const refused = await suggest(1, 'worker-b');
    expect(refused.trials).toEqual([]);
    expect(refused.reason).toBe('max_trials_reached');
    const expires = '2025-01-01T12:01:00.000Z';
    expect(refused.budget).toEqual({
      max_trials: 30,
      completed: 27,
      leased: 3,
      requested: 0,
      leases: [1, 2, 3].map((trial_id) => ({ trial_id, client_id: 'worker-a', lease_expires_at: expires })),
    });
    expect(await studyState()).toBe('ACTIVE');

    // The leases run out: the trials go back to REQUESTED and worker-b gets them, same ids.
    t.advance(60_000);
    const freed = await suggest(3, 'worker-b');
    expect(freed).toMatchObject({ reason: null, budget: null });
    expect(freed.trials.map((x) => [x.trial_id, x.client_id, x.state])).toEqual([1, 2, 3].map((n) => [n, 'worker-b', 'ACTIVE']));
    expect((await observe([1, 2, 3])).study_state).toBe('COMPLETED');
    expect(await suggest(1, 'worker-a')).toMatchObject({ trials: [], reason: 'study_completed', budget: null });
  });

  it('the asker\'s own new leases are listed too, the soonest to expire first; a failed lease frees its slot', async () => {
    await setup({ batch_size: 2, max_trials: 5 });
    expect(ids(await suggest(2, 'worker-a'))).toEqual([1, 2]);
    t.advance(10_000);
    const short = await suggest(4, 'worker-b');
    expect(ids(short)).toEqual([3, 4, 5]);
    expect(short.reason).toBe('max_trials_reached');
    expect(short.budget).toMatchObject({ max_trials: 5, completed: 0, leased: 5, requested: 0 });
    expect(short.budget!.leases.map((l) => [l.trial_id, l.client_id, l.lease_expires_at])).toEqual([
      [1, 'worker-a', '2025-01-01T12:01:00.000Z'],
      [2, 'worker-a', '2025-01-01T12:01:00.000Z'],
      [3, 'worker-b', '2025-01-01T12:01:10.000Z'],
      [4, 'worker-b', '2025-01-01T12:01:10.000Z'],
      [5, 'worker-b', '2025-01-01T12:01:10.000Z'],
    ]);
    const failed = await app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/1/fail`, payload: { reason: 'crash', client_id: 'worker-a' } });
    expect(failed.statusCode, failed.body).toBe(200);
    expect(await suggest(1, 'worker-c')).toMatchObject({ trials: [{ trial_id: 6, client_id: 'worker-c' }], reason: null, budget: null });
  });

  it('lists at most 100 leases and counts them all', async () => {
    await setup({ batch_size: 2, max_trials: 150 });
    expect((await suggest(100, 'worker-a')).trials).toHaveLength(100);
    expect((await suggest(40, 'worker-b')).trials).toHaveLength(40);
    const short = await suggest(20, 'worker-c');
    expect(short.trials).toHaveLength(10);
    expect(short.budget).toMatchObject({ max_trials: 150, completed: 0, leased: 150, requested: 0 });
    expect(short.budget!.leases).toHaveLength(100);
    expect(short.budget!.leases.map((l) => l.trial_id)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });
});
