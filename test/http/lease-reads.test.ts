/**
 * A trial whose lease ran out reads as REQUESTED everywhere at once, before any loop request writes
 * the expiry: the trial, the trials list and its state filters, the study's trial counts (one study
 * and the listing), and /metrics' open leases. The last holder can still reclaim it.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { braninStudy, clock, loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
afterEach(async () => {
  await app?.close();
});

describe('expired leases in every read', () => {
  it('read as REQUESTED without a lease in the trial, the list, the counts and /metrics; reclaimable by the holder', async () => {
    const t = clock();
    ({ app } = await loopApp({ clock: t }));
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { lease_seconds: 60, batch_size: 4 }) })).json().id as string;
    const got = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w1` });
    expect(got.statusCode).toBe(200);
    const get = async (url: string) => (await app.inject({ method: 'GET', url })).json();
    const ids = (b: { trials: { trial_id: number }[] }) => b.trials.map((x) => x.trial_id);

    // Within the lease: ACTIVE everywhere.
    expect(await get(`/v1/studies/${id}/trials/1`)).toMatchObject({ state: 'ACTIVE', client_id: 'w1' });
    expect((await get(`/v1/studies/${id}`)).trial_counts).toMatchObject({ ACTIVE: 2, REQUESTED: 2 });
    const openLeases = async () => /probnes_open_leases (\d+)/.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1];
    expect(await openLeases()).toBe('2');

    t.advance(60_000); // both leases run out now; nobody has asked the loop anything since
    const trial = await get(`/v1/studies/${id}/trials/1`);
    expect(trial).toMatchObject({ state: 'REQUESTED', lease_expires_at: null, client_id: 'w1' });
    expect(ids(await get(`/v1/studies/${id}/trials`)).length).toBe(4);
    expect((await get(`/v1/studies/${id}/trials`)).trials.map((x: { state: string }) => x.state)).toEqual(['REQUESTED', 'REQUESTED', 'REQUESTED', 'REQUESTED']);
    expect(ids(await get(`/v1/studies/${id}/trials?state=REQUESTED`))).toEqual([1, 2, 3, 4]);
    expect(ids(await get(`/v1/studies/${id}/trials?state=ACTIVE`))).toEqual([]);
    expect((await get(`/v1/studies/${id}`)).trial_counts).toMatchObject({ ACTIVE: 0, REQUESTED: 4 });
    const listed = (await get('/v1/studies')).studies.find((s: { id: string }) => s.id === id);
    expect(listed.trial_counts).toMatchObject({ ACTIVE: 0, REQUESTED: 4 });
    expect(await openLeases()).toBe('0');

    // The holder's heartbeat reclaims it (the client id was kept), and the reads follow.
    const hb = await app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/1/heartbeat`, payload: { client_id: 'w1' } });
    expect(hb.json()).toMatchObject({ state: 'ACTIVE', client_id: 'w1' });
    expect(await get(`/v1/studies/${id}/trials/1`)).toMatchObject({ state: 'ACTIVE' });
    expect((await get(`/v1/studies/${id}`)).trial_counts).toMatchObject({ ACTIVE: 1, REQUESTED: 3 });
  });
});
