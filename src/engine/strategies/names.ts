/** The nine method names. The registry is keyed by exactly these; the API's enum derives from them. */
export const METHOD_NAMES = ['prob-cmaes', 'prob-xnes', 'prob-snes', 'cmaes', 'xnes', 'snes', 'bo', 'pibo', 'random'] as const;
export type MethodName = (typeof METHOD_NAMES)[number];
export const DEFAULT_METHOD: MethodName = 'prob-cmaes';
export function isMethodName(x: string): x is MethodName {
  return (METHOD_NAMES as readonly string[]).includes(x);
}
