// @ts-check
/**
 * Mutation testing with StrykerJS: small plausible bugs (a flipped comparison, a dropped
 * term, an off-by-one, a skipped check) are put into src/ one at a time, and each must make a test
 * fail. Run it through scripts/mutation.sh (`npm run test:mutation -- <modules>`), which narrows
 * `mutate` to the modules given or to what a change touched.
 *
 * - vitest runs the tests related to the mutated files (its import graph), with per-test coverage,
 *   so a mutant runs only the tests that reach it; not the tests that drive the server as a
 *   separate process, which never sees a mutant (vitest.mutation.config.ts);
 * - the TypeScript checker drops mutants that do not compile before any test runs;
 * - incremental: the previous result (bench-results/mutation/stryker-incremental.json) is reused for
 *   every mutant whose code and covering tests did not change, so a second run on a module costs
 *   only what changed (`--force` runs everything again);
 * - reports: bench-results/mutation/mutation.html and mutation.json (raw results, not committed; a
 *   published run is copied to bench-results/published/ like the benchmarks).
 *
 * The machines are shared: one test runner by default (STRYKER_CONCURRENCY to change it), and the
 * timeout is generous (a mutant that loops forever is still caught, as "Timeout", which counts as
 * killed).
 *
 * Cost, measured on the project's shared 2-core machine (nice 10, one runner, load about 8): a
 * module's first run 17–20 min (page-token.ts, 91 mutants; no-repeat.ts, 57: a 3-minute dry run
 * of the ~810 tests related to them, then ~15 s per mutant; the checker removes about a quarter as
 * not compiling); an incremental run after a test change 6.5 min. src/ has 20 584 mutants, about
 * 60 hours there at that rate: a full run is not for CI's 90 minutes.
 */
const out = 'bench-results/mutation';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  mutate: ['src/**/*.ts', '!src/**/*.d.ts'],
  // node_modules and .node may be links to another checkout's (a git worktree's setup): the sandbox
  // must not copy them (it cannot copy a directory link: EISDIR).
  ignorePatterns: ['/node_modules', '/.node'],
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  coverageAnalysis: 'perTest',
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // Mutants in module-level code (constants, tables) would need the whole related suite each.
  ignoreStatic: true,
  incremental: true,
  incrementalFile: `${out}/stryker-incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${out}/mutation.html` },
  jsonReporter: { fileName: `${out}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  // The project's bars (90 % for the loop, studies, transfer, security, ProbNES and the GP; 80 %
  // elsewhere) are per module: the report's table shows them; a run does not fail on a score.
  thresholds: { high: 90, low: 80, break: null },
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  timeoutMS: 30_000,
  // The dry run of a module that much of the code imports (probnes-data.ts: the ProbNES loop, the
  // domain's engine calls) runs well over a thousand related tests: 5 minutes (Stryker's default)
  // was not enough for it on the shared machine.
  dryRunTimeoutMinutes: 45,
  timeoutFactor: 2,
  tempDirName: `${out}/.stryker-tmp`,
  cleanTempDir: true,
};
