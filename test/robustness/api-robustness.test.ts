/**
 * Numerical robustness through the API (issue 6 item 5): for every method of the engine registry
 * (METHOD_NAMES, so a new method is covered without touching this file) and every hostile
 * scenario of scenarios.ts, a sequential client runs several generations of batch 3 and every
 * suggestion, distribution and study state is checked after each generation (harness.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { METHOD_NAMES, type MethodName } from '../../src/engine/index.js';
import { generationsFor, robustnessApp, runScenario, type RobustnessApp } from './harness.js';
import { SCENARIOS } from './scenarios.js';

let env: RobustnessApp;
beforeAll(async () => {
  env = await robustnessApp();
});
afterAll(async () => {
  await env.app.close();
});

describe.each([...METHOD_NAMES] as MethodName[])('%s', (method) => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s: valid suggestions and distribution every generation', async (_name, scenario) => {
    await runScenario(env, method, scenario, generationsFor(method));
  });
});
