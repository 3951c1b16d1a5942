/**
 * The test configuration of mutation runs (stryker.config.mjs): the suite's own, without the tests
 * that drive the server as a separate process (a spawned server, the CLI, the client packages, the
 * examples). Stryker switches a mutant on inside its test-runner process only, so a child process
 * always runs the original code: those tests cannot kill a mutant and would only cost time. Nor
 * the dashboard's browser tests (test/ui): they measure what Chromium draws, which on a loaded
 * machine can lag (a tooltip 19 px from the pointer instead of 9.5), and one such failure in
 * Stryker's initial run stops the whole run; the loop and the model views they reach are the HTTP
 * tests' too.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: ['**/node_modules/**', 'test/e2e/**', 'test/cli/**', 'test/clients/**', 'test/examples/**', 'test/ui/**', 'test/hostile/review-transport.test.ts'],
    },
  }),
);
