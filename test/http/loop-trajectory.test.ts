/**
 * A sequential client optimising Branin over HTTP follows exactly the trajectory of the engine
 * driven in-process with the same seed and transforms, for every registered method; asking one
 * point at a time gives the same points (each is one of a jointly chosen batch); maximising −f
 * is minimising f. The studies allow repeats: the reference is the engine alone, which does not
 * redraw a point that repeats an evaluated configuration (test/http/no-repeat.test.ts covers that).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registeredMethods, type MethodName } from '../../src/engine/index.js';
import { branin, braninStudy, fastOptions, loopApp, referenceTrajectory } from '../helpers/loop.js';

const GENERATIONS = 4;
let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await loopApp());
});
afterEach(async () => {
  await app.close();
});

async function create(body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/**
 * Runs `generations` generations as a sequential client asking `count` points per request, or, with
 * count = 'generation', as many as the generation's update waits for (generation_size).
 */
async function runOverHttp(studyId: string, count: number | 'generation', f: (p: Record<string, number>) => number): Promise<Record<string, number>[][]> {
  const gens: Record<string, number>[][] = [];
  for (let g = 0; g < GENERATIONS; g++) {
    const batch: Record<string, number>[] = [];
    let size = Infinity;
    while (batch.length < size) {
      const n = count === 'generation' ? (Number.isFinite(size) ? size - batch.length : 1) : count;
      const res = await app.inject({ method: 'GET', url: `/v1/studies/${studyId}/suggestions?count=${n}` });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.reason).toBeNull();
      expect(body.generation).toBe(g);
      size = body.generation_size;
      for (const t of body.trials) expect(t.generation).toBe(g);
      batch.push(...body.trials.map((t: { parameters: Record<string, number> }) => t.parameters));
      const obs = body.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: f(t.parameters) }));
      const o = await app.inject({ method: 'POST', url: `/v1/studies/${studyId}/observations`, payload: { observations: obs } });
      expect(o.statusCode, o.body).toBe(200);
    }
    gens.push(batch);
  }
  return gens;
}

describe.each(registeredMethods())('%s over HTTP', (method: MethodName) => {
  it('follows the in-process engine trajectory bit for bit (count = the generation\'s size)', async () => {
    const study = await create(braninStudy(method, { options: fastOptions(method), allow_repeats: true }));
    const http = await runOverHttp(study.id, 'generation', branin);
    expect(http).toEqual(referenceTrajectory(study, GENERATIONS, branin));
    const after = (await app.inject({ method: 'GET', url: `/v1/studies/${study.id}` })).json();
    const evaluated = http.reduce((s, g) => s + g.length, 0);
    expect(after).toMatchObject({ generation: GENERATIONS, trial_counts: { COMPLETED: evaluated, REQUESTED: 0, ACTIVE: 0 } });
    // The ProbNES start phase (ALGORITHM.md §29): the 2d + 1 stencil, then one result per generation.
    if (study.options.start_phase === 'powell') expect(evaluated).toBe(2 * 2 + 1 + GENERATIONS - 1);
    else if (method !== 'lq-cmaes') expect(evaluated).toBe(GENERATIONS * study.batch_size);
  });
});

describe('batches and direction', () => {
  it.each(['cmaes', 'prob-cmaes', 'lq-cmaes'] as MethodName[])('%s: one point per request gives the same jointly chosen batches', async (method) => {
    const study = await create(braninStudy(method, { options: fastOptions(method), allow_repeats: true }));
    const http = await runOverHttp(study.id, 1, branin);
    expect(http).toEqual(referenceTrajectory(study, GENERATIONS, branin));
  });

  it.each(['cmaes', 'prob-cmaes', 'bo'] as MethodName[])('%s: maximising −f hands out the points of minimising f', async (method) => {
    const negBranin = (p: Record<string, number>) => -branin(p);
    const max = await create(braninStudy(method, { direction: 'maximize', options: fastOptions(method), allow_repeats: true }));
    const http = await runOverHttp(max.id, 'generation', negBranin);
    const min = await create(braninStudy(method, { options: fastOptions(method), allow_repeats: true }));
    expect(http).toEqual(referenceTrajectory(max, GENERATIONS, negBranin));
    expect(http).toEqual(referenceTrajectory(min, GENERATIONS, branin));
  });
});
