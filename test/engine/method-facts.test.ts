/**
 * The registry's facts about each method (registry.ts METHOD_FACTS) agree with its strategy: the
 * server, GET /v1/methods, the dashboard and the clients read them instead of lists of names.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { METHOD_FACTS, METHOD_NAMES, getStrategy, isMethodName, methodFacts, resolveOptions } from '../../src/engine/strategies/registry.js';

describe('method facts', () => {
  it('every method has its facts, and nothing else does', () => {
    expect(Object.keys(METHOD_FACTS).sort()).toEqual([...METHOD_NAMES].sort());
    expect(isMethodName('prob-foo')).toBe(false);
    expect(() => methodFacts('prob-foo' as never)).toThrow(/unknown method/);
  });

  it.each(METHOD_NAMES)('%s: ranks a generation exactly when its minimum batch is 2', (method) => {
    expect(methodFacts(method).ranksGeneration).toBe(getStrategy(method).minBatch >= 2);
  });

  it.each(METHOD_NAMES)('%s: a method without a model estimates nothing at its mean', (method) => {
    const strategy = getStrategy(method);
    if (methodFacts(method).hasModel) return;
    const state = strategy.init({ dim: 2, batchSize: Math.max(strategy.minBatch, 3), options: resolveOptions(method, 2) }, Rng.fromSeed(1));
    const estimate = strategy.estimate?.(state, []) ?? { predicted: null, predicted_std: null };
    expect(estimate.predicted).toBeNull();
  });

  it('the families are the ones the server treats apart (the ProbNES GP, BO\'s GP, no search distribution)', () => {
    const by = (f: string) => METHOD_NAMES.filter((m) => methodFacts(m).family === f);
    expect(by('probnes')).toEqual(['prob-cmaes', 'prob-xnes', 'prob-snes']);
    expect(by('bo')).toEqual(['bo', 'pibo']);
    expect(METHOD_NAMES.filter((m) => !methodFacts(m).searchDistribution)).toEqual(['bo', 'pibo', 'random']);
    expect(METHOD_NAMES.filter((m) => !methodFacts(m).hasModel)).toEqual(['cmaes', 'xnes', 'snes', 'random']);
    expect(METHOD_NAMES.filter((m) => methodFacts(m).ranksGeneration)).toEqual(['cmaes', 'lq-cmaes', 'xnes', 'snes']);
  });
});
