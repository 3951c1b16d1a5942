/**
 * No wasted repeats through HTTP: a suggestion never repeats a configuration (user units, after
 * rounding) that the study evaluated or has pending; a study whose distribution yields nothing new
 * answers reason "converged" and, with nothing pending, is COMPLETED as converged; allow_repeats
 * restores the method's own points.
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

const key = (p: Record<string, unknown>) => JSON.stringify(Object.keys(p).sort().map((k) => p[k]));

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'repeats', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

/** Suggest one point at a time and observe f at it, `n` times or until the answer has no trial. */
async function run(id: string, n: number, f: (p: Record<string, number>) => number) {
  const seen: string[] = [];
  let last: { reason: string | null; trials: unknown[] } = { reason: null, trials: [] };
  for (let i = 0; i < n; i++) {
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1` });
    expect(res.statusCode, res.body).toBe(200);
    last = res.json();
    if (last.trials.length === 0) break;
    const t = last.trials[0] as { trial_id: number; parameters: Record<string, number> };
    seen.push(key(t.parameters));
    const obs = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: t.trial_id, value: f(t.parameters) }] } });
    expect(obs.statusCode, obs.body).toBe(200);
  }
  return { seen, last };
}

const staircase = (p: Record<string, number>) => Math.floor(p.x! / 2) ** 2 + Math.floor(p.y! / 2) ** 2;

describe('no repeats', () => {
  it('hands out each of a small int space once, then answers converged and completes the study', async () => {
    const id = await create({ method: 'random', batch_size: 1, parameters: [{ name: 'k', type: 'int', bounds: [0, 3] }] });
    const { seen, last } = await run(id, 10, (p) => p.k!);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(4);
    expect(last.reason).toBe('converged');
    const study = (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
    expect(study).toMatchObject({ state: 'COMPLETED', reason: 'converged' });
    const again = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2` })).json();
    expect(again).toMatchObject({ trials: [], reason: 'converged' });
  });

  it.each(['prob-cmaes', 'cmaes'])('%s on a space of six configurations evaluates each once, then converges', async (method) => {
    const parameters = [
      { name: 'k', type: 'int', bounds: [0, 2] },
      { name: 'b', type: 'int', bounds: [0, 1] },
    ];
    const id = await create({ method, batch_size: 2, seed: 1, parameters });
    const { seen, last } = await run(id, 20, (p) => (p.k! - 1) ** 2 + p.b!);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeLessThanOrEqual(6);
    expect(last.reason).toBe('converged');
  });

  it('with allow_repeats the method\'s own points come back, repeats included', async () => {
    const id = await create({ method: 'random', batch_size: 1, allow_repeats: true, parameters: [{ name: 'k', type: 'int', bounds: [0, 3] }] });
    const { seen } = await run(id, 10, (p) => p.k!);
    expect(seen.length).toBe(10);
    expect(new Set(seen).size).toBeLessThanOrEqual(4);
  });

  it.each(['prob-cmaes', 'cmaes', 'bo'])('%s on a 2-D int staircase repeats no configuration', async (method) => {
    const parameters = [
      { name: 'x', type: 'int', bounds: [-20, 20] },
      { name: 'y', type: 'int', bounds: [-20, 20] },
    ];
    const id = await create({ method, batch_size: method === 'bo' ? 1 : 4, seed: 3, parameters });
    const { seen } = await run(id, 40, staircase);
    expect(seen.length).toBeGreaterThan(10);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('a batch never holds the same configuration twice, nor one already pending', async () => {
    const id = await create({ method: 'random', batch_size: 8, parameters: [{ name: 'k', type: 'int', bounds: [0, 9] }] });
    const a = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=6&client_id=a` })).json();
    const b = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=6&client_id=b` })).json();
    const all = [...a.trials, ...b.trials].map((t: { parameters: Record<string, number> }) => t.parameters.k);
    expect(new Set(all).size).toBe(all.length);
  });
});
