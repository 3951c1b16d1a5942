/**
 * A lease runs from the moment its trial is handed out, not from the start of the request that
 * computed it: with an engine call slower than lease_seconds (an injected runner that moves the
 * test clock on while it "computes"), the handed-out trial still has its whole lease, and a second
 * client asking right after gets other points, never the same ones.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { braninStudy, clock, loopApp, type Clock } from '../helpers/loop.js';

let app: FastifyInstance;
afterEach(async () => {
  await app?.close();
});

/** An engine whose ask and tell take `ms` of the test clock (the clock is moved on during the call). */
function slowEngine(t: Clock, ms: number): EngineRunner {
  const inner = new InlineEngineRunner();
  return {
    async run(task: EngineTask) {
      const out = await inner.run(task);
      if (task.op === 'ask' || task.op === 'tell') t.advance(ms);
      return out;
    },
    close: () => inner.close(),
  };
}

describe('leases start at hand-out', () => {
  it('an ask that takes 2.2 s hands out trials whose 1 s lease has not run out; the next worker gets other trials', async () => {
    const t = clock();
    ({ app } = await loopApp({ clock: t, engine: slowEngine(t, 2200) }));
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { lease_seconds: 1, batch_size: 4 }) });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const start = t.now().getTime();
    const first = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w1` });
    expect(first.statusCode, first.body).toBe(200);
    const handedAt = t.now().getTime();
    // The engine took 2.2 s of the clock: the request began before, the hand-out after.
    expect(handedAt - start).toBe(2200);
    for (const trial of first.json().trials) expect(Date.parse(trial.lease_expires_at)).toBe(handedAt + 1000);
    // Half a second later the leases still hold: the next worker gets the generation's other points.
    t.advance(500);
    const second = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w2` });
    expect(second.statusCode, second.body).toBe(200);
    const firstIds = first.json().trials.map((x: { trial_id: number }) => x.trial_id);
    const secondIds = second.json().trials.map((x: { trial_id: number }) => x.trial_id);
    expect(firstIds).toEqual([1, 2]);
    expect(secondIds).toEqual([3, 4]);
    const stored = await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials/1` });
    expect(stored.json()).toMatchObject({ state: 'ACTIVE', client_id: 'w1' });
  });

  it('after a slow update, the next generation\'s points are leased from their hand-out', async () => {
    const t = clock();
    ({ app } = await loopApp({ clock: t, engine: slowEngine(t, 3000) }));
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { lease_seconds: 2, batch_size: 2 }) });
    const id = created.json().id as string;
    const batch = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w1` })).json().trials as { trial_id: number }[];
    const obs = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: batch.map((b, i) => ({ trial_id: b.trial_id, value: i + 1 })) } });
    expect(obs.statusCode, obs.body).toBe(200);
    const next = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=w1` });
    expect(next.statusCode, next.body).toBe(200);
    const [trial] = next.json().trials;
    expect(trial.generation).toBe(1);
    expect(Date.parse(trial.lease_expires_at)).toBe(t.now().getTime() + 2000);
  });
});
