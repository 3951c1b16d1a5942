/**
 * The names of the methods, apart from the registry that maps them to their strategies: the
 * strategies and the contract (types.ts) name methods without importing the registry, which imports
 * every strategy.
 */
export const METHOD_NAMES = ['prob-cmaes', 'prob-xnes', 'prob-snes', 'cmaes', 'lq-cmaes', 'xnes', 'snes', 'bo', 'pibo', 'random'] as const;
export type MethodName = (typeof METHOD_NAMES)[number];
export const DEFAULT_METHOD: MethodName = 'prob-cmaes';
