/**
 * Numerical robustness through the API, hostile geometry: priors far from the
 * optimum or mostly cut off by the bounds, extreme prior scales and option values, odd batch
 * sizes, for every method of the engine registry (METHOD_NAMES) and every scenario of
 * GEOMETRY_SCENARIOS, checked after each generation as in values.test.ts (harness.ts).
 */
import { describeEveryMethod } from './harness.js';
import { GEOMETRY_SCENARIOS } from './scenarios.js';

describeEveryMethod(GEOMETRY_SCENARIOS);
