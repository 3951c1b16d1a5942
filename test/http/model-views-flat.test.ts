/**
 * Importance when the data say nothing about a length scale: a one-parameter ProbNES study whose
 * results are the trial's rank in its batch (0, 1, 2 whatever the point), reported twice over, leaves
 * the hyperparameter posterior flat along the length scale. Its Laplace interval is then unbounded,
 * and the answer gives null ("unavailable") for it instead of failing to serialise an Infinity.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(async () => {
  await t.app.close();
});

it('answers 200 with null intervals where the Laplace sd is infinite', async () => {
  const call = (m: 'GET' | 'POST', u: string, p?: object) => injectOk(t.app, m, u, p);
  const s = await call('POST', '/v1/studies', { name: 'flat', parameters: [{ name: 'p0', bounds: [0, 1] }], method: 'prob-cmaes', batch_size: 3 });
  for (let g = 0; g < 2; g++) {
    const sug = await call('GET', `/v1/studies/${s.id}/suggestions?count=3&client_id=w`);
    await call('POST', `/v1/studies/${s.id}/observations`, { observations: sug.trials.map((tr: { trial_id: number }, i: number) => ({ trial_id: tr.trial_id, value: i })) });
    await call('POST', `/v1/studies/${s.id}/observations`, { observations: sug.trials.map((tr: { parameters: object }, i: number) => ({ parameters: tr.parameters, value: i + 0.5 })) });
  }
  const imp = await call('GET', `/v1/studies/${s.id}/model/importance`);
  const p = imp.parameters[0];
  expect(p.lengthscale_interval).toBeNull();
  expect(p.relevance_interval).toBeNull();
  expect(Number.isFinite(p.relevance)).toBe(true);
});
