/**
 * `extras` in the suggestions answer: non-null, with the number of points handed out beyond the
 * generation_size points the generation's update waits for, exactly when a request gets such
 * points (one request asking for more than the generation has left, or several clients between
 * them); null otherwise. For prob-cmaes and cmaes generation_size is batch_size; for lq-cmaes the
 * surrogate decides it per generation, so it is checked after the model has taken over
 * (generation_size < batch_size).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { MethodName } from '../../src/engine/index.js';
import { braninStudy, fastOptions, loopApp } from '../helpers/loop.js';

type Extras = { count: number; reason: string } | null;
type Answer = { trials: { trial_id: number; parameters: Record<string, number> }[]; generation: number; generation_size: number; extras: Extras };

let app: FastifyInstance;
afterEach(async () => {
  await app.close();
});

async function study(method: MethodName, batch: number): Promise<string> {
  ({ app } = await loopApp());
  // ProbNES's natural-gradient generations (batch_size each): the start phase's are test/http/start-phase.test.ts's.
  const options = method === 'prob-cmaes' ? { ...fastOptions(method), start_phase: 'off' } : fastOptions(method);
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy(method, { batch_size: batch, options }) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function suggest(id: string, count: number, client: string): Promise<Answer> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}&client_id=${client}` });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as Answer;
  expect(body).toHaveProperty('extras');
  return body;
}

// A smooth bowl: lq-cmaes's quadratic surrogate fits it, so it soon ranks candidates itself.
const bowl = (p: Record<string, number>) => (p.x1! - 1) ** 2 + 3 * (p.x2! - 2) ** 2;

async function observe(id: string, answer: Answer): Promise<void> {
  const observations = answer.trials.map((t) => ({ trial_id: t.trial_id, value: bowl(t.parameters) }));
  const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } });
  expect(res.statusCode, res.body).toBe(200);
}

/** The advice differs: a method that ranks a generation loses the extras' results, ProbNES uses them. */
const ADVICE: Record<string, string> = {
  'prob-cmaes': 'This method learns from every result, so extras cost it nothing',
  cmaes: 'give the study batch_size ≥ the number of workers.',
  'lq-cmaes': 'give the study batch_size ≥ the number of workers.',
};

function expectExtras(answer: Answer, count: number, method: MethodName): void {
  expect(answer.extras).not.toBeNull();
  expect(answer.extras!.count).toBe(count);
  expect(answer.extras!.reason).toContain(`${count} of these points go beyond the ${answer.generation_size} results this generation's update waits for`);
  expect(answer.extras!.reason).toContain(ADVICE[method]);
}

describe.each<MethodName>(['prob-cmaes', 'cmaes'])('%s: generation_size = batch_size', (method) => {
  it('one request for more than the generation: the points beyond batch_size are counted', async () => {
    const id = await study(method, 4);
    const got = await suggest(id, 10, 'farm');
    expect(got.generation_size).toBe(4);
    expect(got.trials).toHaveLength(10);
    expectExtras(got, 6, method);
    // A retry returns the same held trials, and says the same.
    expectExtras(await suggest(id, 10, 'farm'), 6, method);
  });

  it('clients that between them ask for more than the generation: only the one that got extras is told', async () => {
    const id = await study(method, 4);
    const first = await suggest(id, 3, 'w1');
    expect(first.extras).toBeNull();
    const second = await suggest(id, 3, 'w2'); // the generation's 4th point and two extras
    expect(second.trials).toHaveLength(3);
    expectExtras(second, 2, method);
    expectExtras(await suggest(id, 1, 'w3'), 1, method);
  });

  it('asking exactly the generation, then the next one: no extras', async () => {
    const id = await study(method, 4);
    const first = await suggest(id, 4, 'w1');
    expect(first.extras).toBeNull();
    await observe(id, first);
    const next = await suggest(id, 4, 'w1');
    expect(next.generation).toBe(1);
    expect(next.extras).toBeNull();
  });
});

describe('lq-cmaes: generation_size is the surrogate\'s choice', () => {
  it('counts extras against generation_size, not batch_size', async () => {
    const id = await study('lq-cmaes', 6);
    // One generation per round, its size read from a first one-point request, until the surrogate
    // hands out fewer than batch_size candidates.
    let first = await suggest(id, 1, 'w1');
    for (let round = 0; first.generation_size >= 6 && round < 40; round++) {
      const whole = await suggest(id, first.generation_size, 'w1');
      expect(whole.extras).toBeNull();
      await observe(id, whole);
      first = await suggest(id, 1, 'w1');
    }
    const size = first.generation_size;
    expect(size).toBeLessThan(6);
    expect(first.extras).toBeNull();
    // Two more points than the generation has: both are extras, though fewer than batch_size were asked for.
    const more = await suggest(id, size + 2, 'w1');
    expect(more.trials).toHaveLength(size + 2);
    expect(more.generation_size).toBe(size);
    expectExtras(more, 2, 'lq-cmaes');
  });
});
