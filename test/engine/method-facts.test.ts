/**
 * The registry's facts about each method (registry.ts METHOD_FACTS) agree with its strategy: the
 * server, GET /v1/methods, the dashboard and the clients read them instead of lists of names.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { METHOD_FACTS, METHOD_NAMES, getStrategy, isMethodName, methodFacts, resolveOptions } from '../../src/engine/strategies/registry.js';
import type { Observation } from '../../src/engine/strategies/types.js';

/**
 * Five generations of `method` on a quadratic, each ask and tell given `history(h)` of the true
 * history h (everything so far): the points asked and the final state, as JSON.
 */
function run(method: (typeof METHOD_NAMES)[number], history: (h: Observation[]) => Observation[]): string {
  const strategy = getStrategy(method);
  const q = Math.max(strategy.minBatch, 4);
  let state = strategy.init({ dim: 2, batchSize: q, options: resolveOptions(method, 2) }, Rng.fromSeed(3));
  const all: Observation[] = [];
  const asked: number[][][] = [];
  for (let g = 0; g < 5; g++) {
    const a = strategy.ask(state, { history: history(all), pending: [] }, q);
    asked.push(a.points);
    const batch = a.points.map((x) => ({ x, y: (x[0]! - 0.3) ** 2 + 2 * (x[1]! + 0.1) ** 2 }));
    all.push(...batch);
    state = strategy.tell(a.state, { batch, history: history(all) });
  }
  return JSON.stringify({ asked, state });
}

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

  // The loop sends no history to a method that reads none (study-snapshot.ts history()): for those,
  // an empty one must change nothing; for the others it must matter, or the fact is too broad.
  it.each(METHOD_NAMES)('%s: reads the history exactly when its facts say so', (method) => {
    const whole = run(method, (h) => h.slice());
    const none = run(method, () => []);
    if (!methodFacts(method).readsHistory) expect(none).toEqual(whole);
    // lq-CMA-ES reads the history only for results that missed their batch (below).
    else if (method !== 'lq-cmaes') expect(none).not.toEqual(whole);
  });

  it('lq-cmaes takes a result that missed its batch from the history', () => {
    const strategy = getStrategy('lq-cmaes');
    const state = strategy.init({ dim: 2, batchSize: 4, options: resolveOptions('lq-cmaes', 2) }, Rng.fromSeed(3));
    const a = strategy.ask(state, { history: [], pending: [] }, 4);
    const results = a.points.map((x) => ({ x, y: x[0]! ** 2 + x[1]! ** 2 }));
    const batch = results.slice(0, 3);
    const told = (history: Observation[]) => JSON.stringify(strategy.tell(a.state, { batch, history }));
    expect(told(results)).not.toEqual(told(batch));
  });

  it('the families are the ones the server treats apart (the ProbNES GP, BO\'s GP, no search distribution)', () => {
    const by = (f: string) => METHOD_NAMES.filter((m) => methodFacts(m).family === f);
    expect(by('probnes')).toEqual(['prob-cmaes', 'prob-xnes', 'prob-snes']);
    expect(by('bo')).toEqual(['bo', 'pibo']);
    expect(METHOD_NAMES.filter((m) => !methodFacts(m).searchDistribution)).toEqual(['bo', 'pibo', 'random']);
    expect(METHOD_NAMES.filter((m) => !methodFacts(m).hasModel)).toEqual(['cmaes', 'xnes', 'snes', 'random']);
    expect(METHOD_NAMES.filter((m) => methodFacts(m).ranksGeneration)).toEqual(['cmaes', 'lq-cmaes', 'xnes', 'snes']);
    expect(METHOD_NAMES.filter((m) => !methodFacts(m).readsHistory)).toEqual(['cmaes', 'xnes', 'snes', 'random']);
  });
});
