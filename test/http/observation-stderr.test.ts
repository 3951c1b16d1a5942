/**
 * A reported stderr reaches the engine: through the API, a ProbNES study's GP gets the known noise
 * (stderr/yStd)² at each reported point (docs/ALGORITHM.md §28), for results of suggested trials and for
 * external points; a study without stderr has none.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbnesState } from '../../src/engine/strategies/probnes-state.js';
import type { Storage } from '../../src/storage/index.js';
import { branin, braninStudy, loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
let storage: Storage;
afterEach(async () => {
  await app.close();
});

/** Two generations of a prob-cmaes study on Branin; `stderr(k)` is what the k-th observation reports. */
async function study(stderr: (k: number) => number | undefined): Promise<ProbnesState> {
  ({ app, storage } = await loopApp());
  const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('prob-cmaes', { options: { candidates: 64 } }) })).json().id as string;
  let k = 0;
  // One external point first (observed without a suggestion), then two generations of suggestions.
  const ext = { parameters: { x1: 1, x2: 2 }, value: branin({ x1: 1, x2: 2 }), ...(stderr(k) === undefined ? {} : { stderr: stderr(k) }) };
  k++;
  expect((await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [ext] } })).statusCode).toBe(200);
  for (let g = 0; g < 2; g++) {
    const s = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=w` })).json();
    const observations = s.trials.map((t: { trial_id: number; parameters: { x1: number; x2: number } }) => {
      const e = stderr(k++);
      return { trial_id: t.trial_id, value: branin(t.parameters), ...(e === undefined ? {} : { stderr: e }) };
    });
    expect((await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } })).statusCode).toBe(200);
  }
  return (await storage.getEngineState(id))!.state as unknown as ProbnesState;
}

describe('stderr reaches the GP', () => {
  it('reported standard errors become known noise on the active points; none reported, none stored', async () => {
    const none = await study(() => undefined);
    expect(none.gp).not.toBeNull();
    expect(none.gp!.knownNoise).toBeUndefined();
    await app.close();
    const s = await study(() => 0.5);
    const g = s.gp!;
    expect(g.knownNoise).toHaveLength(g.activeIdx.length);
    for (const v of g.knownNoise!) expect(v).toBeCloseTo((0.5 / g.yStd) ** 2, 12);
  });
});
