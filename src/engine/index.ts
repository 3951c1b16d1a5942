/**
 * The engine's public surface: the only module the rest of the server imports from src/engine.
 * Everything behind it is pure math over plain JSON (ARCHITECTURE.md rule 1).
 */
export * from './errors.js';
export { type OptionSpec, type OptionSpecs, type Options, type OptionValue } from './strategies/options.js';
export * from './strategies/types.js';
export { METHOD_NAMES, DEFAULT_METHOD, STRATEGIES, METHOD_FACTS, methodFacts, isMethodName, getStrategy, registeredMethods, resolveOptions, migrateState, type MethodName } from './strategies/registry.js';
export { Rng, type RngState, chiSquareQuantile, sampleMvn } from './random/index.js';
export { tryCholesky, cholesky, solveLower, fromRows, toRows, matVec, symmetrize, type Mat } from './linalg/index.js';
export * from './gp/index.js';
export * from './quadrature/index.js';
export { modeOf } from './distributions/categorical.js';
export { activeMask, impute, type Condition } from './distributions/conditional.js';
export { BENCHMARKS, benchmarkNames, getBenchmark, regret as benchmarkRegret, type Benchmark, type BenchmarkDef, type Box as BenchmarkBox, type PriorSpec as BenchmarkPrior } from './benchmarks/index.js';
export * from './multi/index.js';
export { MULTI_BENCHMARKS, multiBenchmarkNames, getMultiBenchmark, type MultiBenchmark, type MultiBenchmarkDef, type MultiEvaluation } from './benchmarks/multi.js';
export { runModelView, type ModelViewTask, type ModelViewResult, type ViewModelSpec, type StoredViewGp, type ImportanceResult, type ChoiceRelevance } from './views/model-view.js';
export { encodeMixed } from './gp/mixed-kernel.js';
