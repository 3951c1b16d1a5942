/**
 * The loop's engine calls (src/domain/studies/engine-ops.ts): what init is told about the space
 * (categories, conditions, objectives), the answer checked to be init's, the 503 an engine failure
 * becomes, and a point handed out: the engine's own u back, bit for bit, when nothing was projected
 * or rounded (CMA-ES recognises its samples by exact comparison), the legalised point otherwise.
 */
import { describe, expect, it } from 'vitest';
import { EngineUnavailableError, handOut, initialState, initSpec } from '../../src/domain/studies/engine-ops.js';
import { searchSpace, toInternal } from '../../src/domain/studies/transforms.js';
import { EngineError, resolveOptions } from '../../src/engine/index.js';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';

const numeric = searchSpace(
  [
    { name: 'x', type: 'float', scale: 'linear', bounds: [-1, 1], step: null, prior: { mean: 0, std: 0.5 } },
    { name: 'n', type: 'int', scale: 'linear', bounds: [0, 10], step: 1, prior: { mean: 5, std: 2 } },
  ] as never,
  { mean: [0, 5], covariance: [[0.25, 0], [0, 4]], std: [0.5, 2] },
);
const conditional = searchSpace(
  [
    { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf'], prior: { probabilities: [0.5, 0.5] } },
    { name: 'gamma', type: 'float', scale: 'log', bounds: [1e-3, 10], step: null, prior: { mean: 0, std: 1 }, condition: { parent: 'kernel', values: ['rbf'] } },
  ] as never,
  { mean: [0], covariance: [[1]], std: [1] },
);

describe('initSpec', () => {
  it('a numeric space: its dimension, the batch size, options and budget; no categories, conditions or outcomes', () => {
    const options = resolveOptions('cmaes', 2);
    expect(initSpec('cmaes', 4, options, numeric, 30)).toEqual({ dim: 2, batchSize: 4, options, box: null, budget: 30 });
  });

  it('a conditional space with a categorical: its categories\' priors and the conditions, in the engine\'s terms', () => {
    const spec = initSpec('random', 2, {}, conditional, null);
    expect(spec.dim).toBe(2);
    expect(spec.categories).toEqual([[0.5, 0.5]]);
    expect(spec.conditions).toHaveLength(1);
    expect('outcomes' in spec).toBe(false);
  });

  it('objectives and constraints: told to the engine only when the study has several objectives or a constraint', () => {
    const one = { objectives: [{ name: 'f', direction: 'minimize' as const }], constraints: [], referencePoint: null };
    expect('outcomes' in initSpec('prob-cmaes', 3, resolveOptions('prob-cmaes', 2), numeric, null, one)).toBe(false);
    const constrained = { ...one, constraints: [{ name: 'c' }] };
    expect(initSpec('prob-cmaes', 3, resolveOptions('prob-cmaes', 2), numeric, null, constrained).outcomes).toEqual({ objectives: 1, constraints: 1 });
  });
});

describe('initialState', () => {
  it('the state init answers; any other answer is an error naming it', async () => {
    const inline = new InlineEngineRunner();
    const spec = initSpec('random', 2, {}, numeric, null);
    const state = await initialState(inline, 'random', spec, 7);
    expect(state).toMatchObject({ method: 'random', dim: 2, batchSize: 2 });
    const wrong: EngineRunner = { run: async () => ({ result: { op: 'estimate', estimate: { predicted: null, predicted_std: null } }, ms: 0 }), close: async () => {} };
    await expect(initialState(wrong, 'random', spec, 7)).rejects.toThrow('engine answered estimate to init');
  });
});

describe('EngineUnavailableError', () => {
  it('a 503 engine_error whose message carries the engine\'s code, or the cause\'s message', () => {
    const e = new EngineUnavailableError(new EngineError('not_positive_definite', 'Σ lost definiteness'));
    expect(e).toMatchObject({ kind: 'unavailable', code: 'engine_error' });
    expect(e.message).toBe('the optimiser could not compute new points (not_positive_definite: Σ lost definiteness); retry later');
    expect(new EngineUnavailableError(new RangeError('worker died')).message).toBe('the optimiser could not compute new points (worker died); retry later');
    expect(new EngineUnavailableError('timeout').message).toBe('the optimiser could not compute new points (timeout); retry later');
    expect(new EngineUnavailableError(undefined).message).toBe('the optimiser could not compute new points (undefined); retry later');
  });
});

describe('handOut', () => {
  it('nothing projected or rounded: the engine\'s own u, bit for bit (a copy), and the values in user units', () => {
    // n = 5 + 2·0.5 = 6 exactly: an integer already; x = 0.5·0.3 inside the bounds.
    const u = [0.3, 0.5];
    const out = handOut(numeric, u);
    expect(out.point).toEqual(u);
    expect(out.point).not.toBe(u);
    expect(out.parameters).toEqual({ x: 0.5 * 0.3, n: 6 });
  });

  it('the engine\'s u itself even where the round trip through user units would change its last bits', () => {
    const space = searchSpace([{ name: 'x', type: 'float', scale: 'linear', bounds: [-10, 10], step: null, prior: { mean: 0.1, std: 0.3 } }] as never, { mean: [0.1], covariance: [[0.09]], std: [0.3] });
    // The first u in 0.001, 0.002, … whose round trip (0.1 + 0.3u − 0.1)/0.3 is not u bit for bit.
    const u = Array.from({ length: 1000 }, (_, i) => (i + 1) / 1000).find((v) => toInternal(space, [0.1 + 0.3 * v])[0] !== v)!;
    expect(u).toBeDefined();
    expect(handOut(space, [u]).point).toEqual([u]);
  });

  it('projected or rounded: the legal point and its own coordinates', () => {
    // x = 0.5·4 = 2 → 1 (the bound); n = 5 + 2·0.3 = 5.6 → 6.
    const out = handOut(numeric, [4, 0.3]);
    expect(out.parameters).toEqual({ x: 1, n: 6 });
    expect(out.point).toEqual(toInternal(numeric, [1, 6]));
  });

  it('a conditional space: only the active parameters are handed out', () => {
    // Internal coordinates: the numeric first (gamma), then the categorical (kernel index 0 = linear).
    expect(Object.keys(handOut(conditional, [0.1, 0]).parameters)).toEqual(['kernel']);
    expect(Object.keys(handOut(conditional, [0.1, 1]).parameters).sort()).toEqual(['gamma', 'kernel']);
  });
});
