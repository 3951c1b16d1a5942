/**
 * Numerical robustness through the API, hostile objective values: for every
 * method of the engine registry (METHOD_NAMES, so a new method is covered without touching this
 * file) and every scenario of VALUE_SCENARIOS, a sequential client runs several generations and
 * every suggestion, distribution and study state is checked after each one (harness.ts).
 * geometry.test.ts does the same for GEOMETRY_SCENARIOS (two files so they run in parallel).
 */
import { describeEveryMethod } from './harness.js';
import { VALUE_SCENARIOS } from './scenarios.js';

describeEveryMethod(VALUE_SCENARIOS);
