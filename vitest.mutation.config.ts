/**
 * The test configuration of mutation runs (stryker.config.mjs): the suite's own, without the tests
 * that drive the server as a separate process (a spawned server, the CLI, the client packages, the
 * examples). Stryker switches a mutant on inside its test-runner process only, so a child process
 * always runs the original code: those tests cannot kill a mutant and would only cost time. Nor
 * the dashboard's browser tests (test/ui): they measure what Chromium draws, which on a loaded
 * machine can lag (a tooltip 19 px from the pointer instead of 9.5), and one such failure in
 * Stryker's initial run stops the whole run; the loop and the model views they reach are the HTTP
 * tests' too.
 *
 * MUTATION_TESTS (comma-separated globs) narrows the run to those test files: a module's own tests,
 * for a module that hundreds of slow tests reach (the GP: every engine test fits one). A score so
 * measured is a lower bound of the whole suite's, which can only kill more.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

const config = mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: ['**/node_modules/**', 'test/e2e/**', 'test/cli/**', 'test/clients/**', 'test/examples/**', 'test/ui/**', 'test/hostile/review-transport.test.ts'],
    },
  }),
);
// Replaced, not merged: mergeConfig would append these globs to the base's test/**/*.test.ts.
if (process.env.MUTATION_TESTS) config.test!.include = process.env.MUTATION_TESTS.split(',');

export default config;
