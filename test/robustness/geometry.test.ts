/**
 * Numerical robustness through the API (issue 6 item 5), hostile geometry: priors far from the
 * optimum or mostly cut off by the bounds, extreme prior scales and option values, odd batch
 * sizes, for every method of the engine registry (METHOD_NAMES) and every scenario of
 * GEOMETRY_SCENARIOS, checked after each generation as in values.test.ts (harness.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { METHOD_NAMES, type MethodName } from '../../src/engine/index.js';
import { generationsFor, robustnessApp, runScenario, type RobustnessApp } from './harness.js';
import { GEOMETRY_SCENARIOS } from './scenarios.js';

let env: RobustnessApp;
beforeAll(async () => {
  env = await robustnessApp();
});
afterAll(async () => {
  await env.app.close();
});

describe.each([...METHOD_NAMES] as MethodName[])('%s', (method) => {
  it.each(GEOMETRY_SCENARIOS.map((s) => [s.name, s] as const))('%s: valid suggestions and distribution every generation', async (_name, scenario) => {
    await runScenario(env, method, scenario, generationsFor(method));
  });
});
