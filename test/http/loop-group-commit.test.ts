/**
 * Group commit: observation requests that queue on one study are written in one commit, each
 * validated against the state the ones before it leave and answered on its own, and none before
 * the commit containing it succeeded. Plus the per-study cache: a commit by another writer is seen.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { braninStudy, loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
afterEach(async () => {
  await app.close();
});

/** Storage whose commits are counted and can be held back until released. */
function countingStorage() {
  const inner = SqliteStorage.open(':memory:');
  const state = { commits: 0, hold: null as Promise<void> | null };
  const storage = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'commitGeneration') {
        return async (...args: Parameters<Storage['commitGeneration']>) => {
          if (state.hold) await state.hold;
          state.commits++;
          return target.commitGeneration(...args);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { storage, state };
}

const observe = (id: string, observations: unknown[]) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } });

describe('group commit of observations', () => {
  it('writes concurrent requests in one commit; a rejected one gets its own error and changes nothing', async () => {
    const { storage, state } = countingStorage();
    ({ app } = await loopApp({ storage }));
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { batch_size: 8 }) })).json().id;
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=4&client_id=w` })).json().trials as { trial_id: number }[];
    const before = state.commits;
    const [a, b, c, d, e, f] = await Promise.all([
      observe(id, [{ trial_id: trials[0]!.trial_id, value: 1 }]),
      observe(id, [{ trial_id: trials[1]!.trial_id, value: 2 }, { trial_id: 999, value: 3 }]), // unknown id: 404, atomically
      observe(id, [{ parameters: { x1: 0, x2: 1 }, value: 4 }]),
      observe(id, [{ trial_id: trials[0]!.trial_id, value: 5 }]), // after a's result: 409
      observe(id, [{ trial_id: trials[0]!.trial_id, value: 1 }]), // identical repeat of a's: 200
      observe(id, [{ trial_id: trials[2]!.trial_id, value: 6 }]),
    ]);
    expect(state.commits - before).toBe(1);
    expect(a!.statusCode).toBe(200);
    expect(b!.json().code).toBe('trial_not_found');
    expect(c!.json().trials).toMatchObject([{ trial_id: 9, source: 'external', value: 4 }]);
    expect(d!.json().code).toBe('trial_already_completed');
    expect(e!.statusCode).toBe(200);
    expect(f!.json().trials).toMatchObject([{ trial_id: trials[2]!.trial_id, state: 'COMPLETED', value: 6 }]);
    const study = (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
    expect(study.trial_counts).toMatchObject({ COMPLETED: 3, ACTIVE: 2 });
    const t1 = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials/${trials[1]!.trial_id}` })).json();
    expect(t1).toMatchObject({ state: 'ACTIVE', value: null });
  });

  it('answers no request before its commit succeeded', async () => {
    const { storage, state } = countingStorage();
    ({ app } = await loopApp({ storage }));
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes') })).json().id;
    let release!: () => void;
    state.hold = new Promise<void>((r) => (release = r));
    const answered: number[] = [];
    const pending = [0, 1, 2].map((i) => observe(id, [{ parameters: { x1: i, x2: 1 }, value: i }]).then((res) => (answered.push(i), res)));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toEqual([]);
    expect(state.commits).toBe(0);
    release();
    const res = await Promise.all(pending);
    expect(res.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(state.commits).toBe(1);
  });

  it('a generation completed inside a group is told exactly once, and later requests see the new generation', async () => {
    ({ app } = await loopApp());
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { batch_size: 2 }) })).json().id;
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=w` })).json().trials as { trial_id: number }[];
    const res = await Promise.all(trials.map((t) => observe(id, [{ trial_id: t.trial_id, value: t.trial_id }])));
    expect(res.map((r) => r.json().generation)).toEqual([0, 1, 1]);
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json()).toMatchObject({ generation: 1, trial_counts: { COMPLETED: 3 } });
  });
});

describe('per-study cache', () => {
  it('sees results committed by another writer (as from another replica) before the next engine call', async () => {
    const storage = SqliteStorage.open(':memory:');
    ({ app } = await loopApp({ storage }));
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { batch_size: 2 }) })).json().id;
    const s1 = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w` })).json().trials as { trial_id: number }[];
    await observe(id, [{ trial_id: s1[0]!.trial_id, value: 1 }]);
    // Another writer completes the second trial directly in storage.
    const rev = (await storage.getEngineState(id))!.revision;
    const r = await storage.commitGeneration(id, {
      expectedRevision: rev, generation: 0, engineState: null, newTrials: [], now: '2025-01-01T13:00:00.000Z',
      trialUpdates: [{ trialId: s1[1]!.trial_id, expectedState: 'ACTIVE', state: 'COMPLETED', clientId: 'w', leaseExpiresAt: null, value: 2, stderr: null, failureReason: null, late: false, completedAt: '2025-01-01T13:00:00.000Z' }],
    });
    expect(r.committed).toBe(true);
    // The next request sees the generation complete and updates the model.
    const next = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=v` })).json();
    expect(next).toMatchObject({ generation: 1, trials: [{ generation: 1 }] });
  });
});
