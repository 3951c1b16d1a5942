/**
 * Numerical robustness through the API (issue 6 item 5), hostile objective values: for every
 * method of the engine registry (METHOD_NAMES, so a new method is covered without touching this
 * file) and every scenario of VALUE_SCENARIOS, a sequential client runs several generations and
 * every suggestion, distribution and study state is checked after each one (harness.ts).
 * geometry.test.ts does the same for GEOMETRY_SCENARIOS (two files so they run in parallel).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { METHOD_NAMES, type MethodName } from '../../src/engine/index.js';
import { generationsFor, robustnessApp, runScenario, type RobustnessApp } from './harness.js';
import { VALUE_SCENARIOS } from './scenarios.js';

let env: RobustnessApp;
beforeAll(async () => {
  env = await robustnessApp();
});
afterAll(async () => {
  await env.app.close();
});

describe.each([...METHOD_NAMES] as MethodName[])('%s', (method) => {
  it.each(VALUE_SCENARIOS.map((s) => [s.name, s] as const))('%s: valid suggestions and distribution every generation', async (_name, scenario) => {
    await runScenario(env, method, scenario, generationsFor(method));
  });
});
