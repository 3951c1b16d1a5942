/**
 * The TypeScript client's early stopping: report() answers should_stop by the study's median rule,
 * stop() completes a trial as stopped, intermediateValues() returns the curves; against the app
 * listening on a loopback port in this process.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbnesClient, ProbnesError } from '../../clients/typescript/src/index.js';
import { makeTestApp } from '../helpers/app.js';

let app: FastifyInstance;
let c: ProbnesClient;
beforeAll(async () => {
  ({ app } = await makeTestApp());
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  c = new ProbnesClient({ baseUrl: address, maxRetries: 0 });
});
afterAll(async () => {
  await app.close();
});

describe('TypeScript client: early stopping', () => {
  it('reports values, is told to stop by the median rule, and stops the trial', async () => {
    const study = await c.createStudy({ name: 'ts-stop', method: 'random', batch_size: 1, parameters: [{ name: 'x', bounds: [0, 1] }], stopping: { rule: 'median', min_steps: 0, warmup_trials: 1 } });
    const [first] = (await c.suggest(study.id, { clientId: 'a' })).trials;
    expect((await c.report(study.id, first!.trial_id, 0, 1)).should_stop).toBe(false);
    await c.observeOne(study.id, first!.trial_id, 1);
    const [second] = (await c.suggest(study.id, { clientId: 'b' })).trials;
    const answer = await c.report(study.id, second!.trial_id, 0, 3);
    expect(answer).toMatchObject({ should_stop: true, reason: 'worse_than_median', median: 1 });
    const done = await c.stop(study.id, second!.trial_id, 3);
    expect(done.trials[0]).toMatchObject({ state: 'COMPLETED', stopped: true, value: 3 });
    expect(await c.intermediateValues(study.id)).toEqual({
      trials: [
        { trial_id: first!.trial_id, intermediate_values: [{ step: 0, value: 1 }] },
        { trial_id: second!.trial_id, intermediate_values: [{ step: 0, value: 3 }] },
      ],
    });
  });

  it('a trial handle reports, learns to stop, and stops', async () => {
    const study = await c.createStudy({ name: 'ts-handle', method: 'random', batch_size: 1, parameters: [{ name: 'x', bounds: [0, 1] }], stopping: { rule: 'median', warmup_trials: 1 } });
    const first = c.trialHandle(study.id, (await c.suggest(study.id, { clientId: 'a' })).trials[0]!, 'a');
    expect(await first.report(0, 2)).toBe(false);
    expect(first.last?.reason).toBe('warming_up');
    await first.complete(2);
    const second = c.trialHandle(study.id, (await c.suggest(study.id, { clientId: 'b' })).trials[0]!, 'b');
    expect(Object.keys(second.parameters)).toEqual(['x']);
    expect(await second.report(0, 5)).toBe(true);
    expect((await second.stop(5)).trials[0]).toMatchObject({ stopped: true, value: 5 });
  });

  it('a different value for a reported step is a ProbnesError 409', async () => {
    const study = await c.createStudy({ name: 'ts-conflict', method: 'random', batch_size: 1, parameters: [{ name: 'x', bounds: [0, 1] }] });
    const [t] = (await c.suggest(study.id)).trials;
    await c.report(study.id, t!.trial_id, 2, 0.5);
    const err = await c.report(study.id, t!.trial_id, 2, 0.6).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProbnesError);
    expect((err as ProbnesError).status).toBe(409);
  });
});
