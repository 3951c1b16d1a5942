/**
 * The documented terminal state under hostile values: a study with max_trials, fed the extreme
 * range (±1.7e308) of values-scenarios, stays ACTIVE until its budget is spent, then is COMPLETED
 * with reason max_trials_reached (docs/limits.md, docs/API.md "The suggest/observe loop"); its
 * distribution stays finite and positive definite and further requests are answered, not failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_NAMES, type MethodName } from '../../src/engine/index.js';
import { cheapOptions, expectLegal, expectSpd, robustnessApp, type Params, type ParamSpec, type RobustnessApp } from './harness.js';

let env: RobustnessApp;
beforeAll(async () => {
  env = await robustnessApp();
});
afterAll(async () => {
  await env.app.close();
});

const parameters: ParamSpec[] = [
  { name: 'x', bounds: [-5, 5] },
  { name: 'n', type: 'int', bounds: [0, 3] },
];
const f = (p: Params) => (p.x! > 0 ? 1.7e308 : -1.7e308 / (1 + p.n!));

describe.each([...METHOD_NAMES] as MethodName[])('%s', (method) => {
  it('runs to max_trials over the extreme value range and ends COMPLETED with its reason', async () => {
    const { app } = env;
    env.clear();
    const maxTrials = 8; // not a multiple of the batch: the last generation is cut short
    const created = await app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { name: `terminal-${method}`, method, batch_size: 3, seed: 11, max_trials: maxTrials, parameters, options: cheapOptions(method) },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    let completed = 0;
    for (let request = 0; request < 10 && completed < maxTrials; request++) {
      const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3` });
      expect(res.statusCode, res.body).toBe(200);
      const sug = res.json() as { trials: { trial_id: number; parameters: Params }[]; reason: string | null };
      expect(sug.trials.length).toBe(Math.min(3, maxTrials - completed));
      expect(sug.reason).toBe(sug.trials.length < 3 ? 'max_trials_reached' : null);
      for (const t of sug.trials) expectLegal(t.parameters, parameters, `${method} request ${request}`);
      const obs = await app.inject({
        method: 'POST',
        url: `/v1/studies/${id}/observations`,
        payload: { observations: sug.trials.map((t) => ({ trial_id: t.trial_id, value: f(t.parameters) })) },
      });
      expect(obs.statusCode, obs.body).toBe(200);
      completed += sug.trials.length;
      const study = (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json() as { state: string; reason: string | null };
      expect(study.state).toBe(completed < maxTrials ? 'ACTIVE' : 'COMPLETED');
      if (completed === maxTrials) expect(study.reason).toBe('max_trials_reached');
    }
    expect(completed).toBe(maxTrials);
    const after = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3` });
    expect(after.statusCode, after.body).toBe(200);
    expect(after.json()).toMatchObject({ trials: [], reason: 'study_completed' });
    const dist = await app.inject({ method: 'GET', url: `/v1/studies/${id}/distribution` });
    expect(dist.statusCode, dist.body).toBe(200);
    expectSpd(dist.json().covariance, `${method} final distribution`);
    expect(Object.values(dist.json().mean as Params).every(Number.isFinite)).toBe(true);
    expect(env.errors()).toEqual([]);
  });
});
