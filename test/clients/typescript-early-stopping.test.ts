/**
 * The TypeScript client's early stopping: report() answers should_stop by the study's median rule,
 * stop() completes a trial as stopped, listIntermediateValues() returns a page of the curves and
 * intermediateValues() all of them; against the app listening on a loopback port in this process.
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
      next_page_token: null,
    });
  });

  it('reads the curves in pages, and intermediateValues joins a curve split across pages', async () => {
    const study = await c.createStudy({ name: 'ts-pages', method: 'random', batch_size: 1, parameters: [{ name: 'x', bounds: [0, 1] }] });
    const [a] = (await c.suggest(study.id, { clientId: 'a' })).trials;
    const [b] = (await c.suggest(study.id, { clientId: 'b' })).trials;
    for (const step of [0, 1, 2, 3, 4]) await c.report(study.id, a!.trial_id, step, step / 10);
    for (const step of [0, 1]) await c.report(study.id, b!.trial_id, step, step);
    // Pages of 3 values: a's five steps end on the second page, which b's curve completes.
    const first = await c.listIntermediateValues(study.id, { pageSize: 3 });
    expect(first.trials).toEqual([{ trial_id: a!.trial_id, intermediate_values: [0, 1, 2].map((s) => ({ step: s, value: s / 10 })) }]);
    const second = await c.listIntermediateValues(study.id, { pageSize: 3, pageToken: first.next_page_token! });
    expect(second.trials.map((t) => [t.trial_id, t.intermediate_values.map((v) => v.step)])).toEqual([[a!.trial_id, [3, 4]], [b!.trial_id, [0]]]);
    const whole = {
      trials: [
        { trial_id: a!.trial_id, intermediate_values: [0, 1, 2, 3, 4].map((s) => ({ step: s, value: s / 10 })) },
        { trial_id: b!.trial_id, intermediate_values: [{ step: 0, value: 0 }, { step: 1, value: 1 }] },
      ],
      next_page_token: null,
    };
    expect(await c.intermediateValues(study.id, { pageSize: 3 })).toEqual(whole);
    expect(await c.intermediateValues(study.id)).toEqual(whole);
    const bad = await c.listIntermediateValues(study.id, { pageSize: 0 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ProbnesError);
    expect((bad as ProbnesError).status).toBe(400);
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
