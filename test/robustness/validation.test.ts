/**
 * The hostile inputs the API refuses rather than optimises: a prior whose mean lies outside the
 * bounds, a covariance that is not positive definite, and values that overflow to ±∞ when the JSON
 * is parsed (1e400). Each is a 400 application/problem+json naming the field by JSON pointer, for
 * every registered method; never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_NAMES, type MethodName } from '../../src/engine/index.js';
import { robustnessApp, type RobustnessApp } from './harness.js';

let env: RobustnessApp;
beforeAll(async () => {
  env = await robustnessApp();
});
afterAll(async () => {
  await env.app.close();
});

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }, path: string): void {
  expect(res.statusCode).toBe(400);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body.code).toBe('validation_failed');
  expect(body.errors.map((e: { path: string }) => e.path)).toContain(path);
}

describe.each([...METHOD_NAMES] as MethodName[])('%s', (method) => {
  const base = { name: 'refused', method, batch_size: 3 };

  it('refuses a prior mean outside the bounds, per parameter and joint', async () => {
    const perParam = await env.app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { ...base, parameters: [{ name: 'x', bounds: [-1, 1], prior: { mean: 50, std: 1 } }] },
    });
    expectProblem(perParam, '/parameters/0/prior/mean');
    const joint = await env.app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { ...base, parameters: [{ name: 'x', bounds: [-1, 1] }, { name: 'y', bounds: [-1, 1] }], prior: { mean: [0, 1e6], covariance: [[1, 0], [0, 1]] } },
    });
    expectProblem(joint, '/prior/mean/1');
  });

  it('refuses a joint prior covariance that is not positive definite', async () => {
    const res = await env.app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { ...base, parameters: [{ name: 'x', bounds: [-1, 1] }, { name: 'y', bounds: [-1, 1] }], prior: { mean: [0, 0], covariance: [[1, 1], [1, 1]] } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.some((e: { path: string }) => e.path.startsWith('/prior/covariance'))).toBe(true);
  });

  it('refuses a value that overflows to infinity when parsed (1e400), and keeps the trial ACTIVE', async () => {
    const created = await env.app.inject({ method: 'POST', url: '/v1/studies', payload: { ...base, parameters: [{ name: 'x', bounds: [-1, 1] }] } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    const sug = (await env.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1` })).json();
    const trialId = sug.trials[0].trial_id;
    // Raw JSON text: 1e400 is valid JSON syntax, and JSON.parse turns it into Infinity.
    const res = await env.app.inject({
      method: 'POST',
      url: `/v1/studies/${id}/observations`,
      headers: { 'content-type': 'application/json' },
      payload: `{"observations":[{"trial_id":${trialId},"value":1e400}]}`,
    });
    expectProblem(res, '/observations/0/value');
    const trial = (await env.app.inject({ method: 'GET', url: `/v1/studies/${id}/trials/${trialId}` })).json();
    expect(trial.state).toBe('ACTIVE');
  });
});
