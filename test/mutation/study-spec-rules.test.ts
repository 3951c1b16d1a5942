/**
 * Every rule of a study's specification that spans fields (src/domain/studies/study-spec.ts
 * checkStudySpec), one bad specification per rule: refused with exactly that problem, its JSON
 * pointer and its message, and nothing else; beside each, the nearest specification that passes (a
 * bound itself, the other branch). The HTTP tests see these through whole requests and mostly match
 * the messages loosely; here the wording is the contract, since a client shows it to a person.
 */
import { describe, expect, it, vi } from 'vitest';
import { alignToGrid, categoricalMethods, checkStudySpec, effectivePrior, numericIndices, usableStep, type StudySpecInput } from '../../src/domain/studies/study-spec.js';
import { ValidationError, type FieldError } from '../../src/domain/common/errors.js';
import { getStrategy, METHOD_NAMES } from '../../src/engine/index.js';

// Every registered method searches categorical parameters; the refusal of one that does not is checked
// on a stand-in: while `withoutCategorical.method` is set, the registry describes that method without them.
const withoutCategorical = vi.hoisted(() => ({ method: null as string | null }));
vi.mock('../../src/engine/strategies/registry.js', async (importOriginal) => {
  const registry = await importOriginal<typeof import('../../src/engine/strategies/registry.js')>();
  return { ...registry, getStrategy: (name: string) => (name === withoutCategorical.method ? { ...registry.getStrategy(name as never), categorical: undefined } : registry.getStrategy(name as never)) };
});

type Param = Record<string, unknown>;
const x = (over: Param = {}): Param => ({ name: 'x', type: 'float', scale: 'linear', bounds: [0, 1], ...over });
const spec = (parameters: Param[], over: Record<string, unknown> = {}): StudySpecInput => ({ name: 's', direction: 'minimize', method: 'random', batch_size: 1, options: {}, parameters, prior: null, ...over }) as unknown as StudySpecInput;

function problems(input: StudySpecInput): FieldError[] {
  try {
    checkStudySpec(input);
    return [];
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return err.errors;
  }
}

const cat = (over: Param = {}): Param => ({ name: 'c', type: 'categorical', choices: ['a', 'b', 'c'], ...over });

describe('a parameter', () => {
  it.each<[string, Param[], FieldError[]]>([
    ['a choice twice', [cat({ choices: ['a', 'b', 'a'] })], [{ path: '/parameters/0/choices/2', message: 'duplicates choice 0: choices must be distinct' }]],
    ['probabilities one short', [cat({ prior: { probabilities: [0.5, 0.5] } })], [{ path: '/parameters/0/prior/probabilities', message: 'must have one probability per choice (3), got 2' }]],
    ['probabilities not summing to 1', [cat({ prior: { probabilities: [0.5, 0.5, 0.5] } })], [{ path: '/parameters/0/prior/probabilities', message: 'must sum to 1 (to 0.000001), got 1.5' }]],
    ['bounds not ordered', [x({ bounds: [1, 1] })], [{ path: '/parameters/0/bounds', message: 'bounds must be ordered [low, high] with low < high' }]],
    ['a log scale from 0', [x({ scale: 'log', bounds: [0, 1] })], [{ path: '/parameters/0/bounds/0', message: 'a log-scaled parameter needs bounds > 0' }]],
    ['an int with a fractional bound', [x({ type: 'int', bounds: [0, 1.5] })], [{ path: '/parameters/0/bounds', message: 'an int parameter needs integer bounds' }]],
    ['a prior mean above the bounds', [x({ prior: { mean: 1.5, std: 1 } })], [{ path: '/parameters/0/prior/mean', message: 'prior mean must lie within the bounds, [0, 1]' }]],
    ['a prior mean below the bounds', [x({ prior: { mean: -0.5, std: 1 } })], [{ path: '/parameters/0/prior/mean', message: 'prior mean must lie within the bounds, [0, 1]' }]],
    ['a log parameter\'s prior mean outside ln of its bounds', [x({ scale: 'log', bounds: [1, 100], prior: { mean: 5, std: 1 } })], [{ path: '/parameters/0/prior/mean', message: `prior mean must lie within the bounds, [0, ${Math.log(100)}] (the mean of a log-scaled parameter is of ln(value))` }]],
    ['a step on a log float', [x({ scale: 'log', bounds: [1, 100], step: 1 })], [{ path: '/parameters/0/step', message: 'a log-scaled parameter takes no step (as in Optuna): its search is continuous in ln(value); leave out step or scale' }]],
    ['a step of 2 on a log int', [x({ type: 'int', scale: 'log', bounds: [1, 100], step: 2 })], [{ path: '/parameters/0/step', message: 'a log-scaled int parameter takes no step other than 1 (as in Optuna): leave out step or scale' }]],
    ['a fractional step on an int', [x({ type: 'int', bounds: [0, 10], step: 1.5 })], [{ path: '/parameters/0/step', message: 'an int parameter\'s step must be an integer' }]],
    ['a step without bounds', [x({ bounds: null, prior: { mean: 0, std: 1 }, step: 0.5 })], [{ path: '/parameters/0/step', message: 'a stepped parameter needs bounds: its values are low + k·step' }]],
    ['a step too fine for the bounds', [x({ bounds: [0, 1e6], step: 1e-3 })], [{ path: '/parameters/0/step', message: 'must be at least 0.01 (1e-8 × max(|low|, |high|)): a finer grid has more values than doubles tell apart at these bounds; leave out step for a continuous parameter' }]],
    ['a step too fine for a negative low', [x({ bounds: [-1e6, 0], step: 1e-3 })], [{ path: '/parameters/0/step', message: 'must be at least 0.01 (1e-8 × max(|low|, |high|)): a finer grid has more values than doubles tell apart at these bounds; leave out step for a continuous parameter' }]],
    ['a step wider than the bounds', [x({ step: 2 })], [{ path: '/parameters/0/step', message: 'must be at most high − low (1 − 0), so that the grid has at least two values' }]],
    ['a high off the grid', [x({ bounds: [0, 1.05], step: 0.1 })], [{ path: '/parameters/0/bounds/1', message: 'must be a value of the grid low + k·step: the last one of these bounds is 1' }]],
    ['a step with bounds out of order: only the bounds', [x({ bounds: [1, 0], step: 0.1 })], [{ path: '/parameters/0/bounds', message: 'bounds must be ordered [low, high] with low < high' }]],
    ['no bounds and no prior', [x({ bounds: null })], [{ path: '/parameters/0/prior', message: 'a parameter without bounds needs a prior (or give the joint `prior`)' }]],
    // Bounds already refused: the prior's mean is not checked against them (nor a step's grid built on them).
    ['equal bounds with a prior mean outside them: only the bounds', [x({ bounds: [1, 1], prior: { mean: 5, std: 1 } })], [{ path: '/parameters/0/bounds', message: 'bounds must be ordered [low, high] with low < high' }]],
    ['a log scale from 0 with a prior mean above ln(high): only the bound', [x({ scale: 'log', bounds: [0, 10], prior: { mean: 5, std: 1 } })], [{ path: '/parameters/0/bounds/0', message: 'a log-scaled parameter needs bounds > 0' }]],
    ['equal bounds with a step: only the bounds', [x({ bounds: [1, 1], step: 0.5 })], [{ path: '/parameters/0/bounds', message: 'bounds must be ordered [low, high] with low < high' }]],
    ['a name twice', [x(), x()], [{ path: '/parameters/1/name', message: 'duplicates the name of parameter 0' }]],
  ])('%s', (_, parameters, expected) => {
    expect(problems(spec(parameters))).toEqual(expected);
  });

  it.each<[string, Param[]]>([
    ['1 and "1" as two choices', [cat({ choices: [1, '1'] })]],
    ['probabilities summing to 1 within 1e-6', [cat({ prior: { probabilities: [0.5, 0.3, 0.2 + 5e-7] } })]],
    ['a prior mean at either bound', [x({ prior: { mean: 1, std: 1 } }), x({ name: 'y', prior: { mean: 0, std: 1 } })]],
    ['a log int with step 1', [x({ type: 'int', scale: 'log', bounds: [1, 100], step: 1 })]],
    ['an int with integer bounds and step', [x({ type: 'int', bounds: [0, 10], step: 5 })]],
    ['a step of exactly the finest allowed', [x({ bounds: [0, 1e6], step: 0.01 })]],
    ['a step of exactly high − low', [x({ step: 1 })]],
    ['a high on the grid in decimal (1/0.1 is 9.999… in binary)', [x({ step: 0.1 })]],
    ['no bounds with a prior', [x({ bounds: null, prior: { mean: 3, std: 2 } })]],
    ['an int with an explicit step of 1 and no bounds (the default grid needs none)', [x({ type: 'int', bounds: null, prior: { mean: 3, std: 2 }, step: 1 })]],
  ])('passes: %s', (_, parameters) => {
    expect(problems(spec(parameters))).toEqual([]);
  });
});

describe('the joint prior', () => {
  const two = [x(), x({ name: 'y' })];
  it.each<[string, Param[], unknown, FieldError[]]>([
    ['a mean one short', two, { mean: [0.5], covariance: [[1, 0], [0, 1]] }, [{ path: '/prior/mean', message: 'must have one entry per parameter (2)' }]],
    ['a mean one short beside a categorical', [...two, cat()], { mean: [0.5], covariance: [[1, 0], [0, 1]] }, [{ path: '/prior/mean', message: 'must have one entry per numeric parameter (categorical ones have their own prior) (2)' }]],
    ['a ragged covariance', two, { mean: [0.5, 0.5], covariance: [[1, 0], [0]] }, [{ path: '/prior/covariance', message: 'must be a 2×2 matrix, in the order of the numeric parameters' }]],
    ['a covariance of three rows', two, { mean: [0.5, 0.5], covariance: [[1, 0], [0, 1], [0, 0]] }, [{ path: '/prior/covariance', message: 'must be a 2×2 matrix, in the order of the numeric parameters' }]],
    ['an asymmetric covariance', two, { mean: [0.5, 0.5], covariance: [[1, 0.5], [0, 1]] }, [{ path: '/prior/covariance', message: 'must be symmetric (to a relative tolerance of 1e-8)' }]],
    ['an indefinite covariance', two, { mean: [0.5, 0.5], covariance: [[1, 2], [2, 1]] }, [{ path: '/prior/covariance', message: 'must be positive definite' }]],
    ['a mean outside the first parameter\'s bounds', two, { mean: [2, 0.5], covariance: [[1, 0], [0, 1]] }, [{ path: '/prior/mean/0', message: 'must lie within the bounds of x, [0, 1]' }]],
    ['a mean below the second\'s', two, { mean: [0.5, -1], covariance: [[1, 0], [0, 1]] }, [{ path: '/prior/mean/1', message: 'must lie within the bounds of y, [0, 1]' }]],
    ['beside a parameter\'s own prior', [x({ prior: { mean: 0.5, std: 1 } }), x({ name: 'y' })], { mean: [0.5, 0.5], covariance: [[1, 0], [0, 1]] }, [{ path: '/parameters/0/prior', message: 'give per-parameter priors or the joint `prior`, not both' }]],
    ['a mean one too long: only its length, not the bounds of the first entries', two, { mean: [2, 0.5, 7], covariance: [[1, 0], [0, 1]] }, [{ path: '/prior/mean', message: 'must have one entry per parameter (2)' }]],
    ['equal bounds with a mean outside them: only the bounds', [x({ bounds: [1, 1] })], { mean: [5], covariance: [[1]] }, [{ path: '/parameters/0/bounds', message: 'bounds must be ordered [low, high] with low < high' }]],
    ['a log scale from 0 with a mean above ln(high): only the bound', [x({ scale: 'log', bounds: [0, 10] })], { mean: [5], covariance: [[1]] }, [{ path: '/parameters/0/bounds/0', message: 'a log-scaled parameter needs bounds > 0' }]],
    ['a log parameter\'s mean above ln(high)', [x({ scale: 'log', bounds: [1, 100] })], { mean: [10], covariance: [[1]] }, [{ path: '/prior/mean/0', message: `must lie within the bounds of x, [0, ${Math.log(100)}]` }]],
    ['on a study of categorical parameters only', [cat()], { mean: [], covariance: [] }, [{ path: '/prior', message: 'a joint prior is over the numeric parameters, and this study has none' }]],
  ])('%s', (_, parameters, prior, expected) => {
    expect(problems(spec(parameters, { prior }))).toEqual(expected);
  });

  it('a mean at the bounds, a nearly symmetric covariance, a parameter without bounds: passes', () => {
    expect(problems(spec([x(), x({ name: 'y', bounds: null })], { prior: { mean: [1, 100], covariance: [[1, 0.3], [0.3 + 1e-9, 1]] } }))).toEqual([]);
    expect(problems(spec([x(), x({ name: 'y' })], { prior: { mean: [0, 1], covariance: [[1, 0], [0, 1]] } }))).toEqual([]);
  });
});

describe('the method', () => {
  it('a ranking method needs its minimum batch size', () => {
    const min = getStrategy('cmaes').minBatch;
    expect(min).toBeGreaterThan(1);
    expect(problems(spec([x()], { method: 'cmaes', batch_size: min - 1 }))).toEqual([{ path: '/batch_size', message: `cmaes ranks the points of a generation and needs batch_size ≥ ${min}` }]);
    expect(problems(spec([x()], { method: 'cmaes', batch_size: min }))).toEqual([]);
  });

  it('every method searches categorical parameters', () => {
    expect(categoricalMethods()).toEqual([...METHOD_NAMES]);
    for (const method of METHOD_NAMES) expect(problems(spec([x(), cat(), cat({ name: 'd' })], { method, batch_size: 4 }))).toEqual([]);
  });

  it('a method without categorical support (a stand-in) names the first categorical parameter and the methods that have it', () => {
    withoutCategorical.method = 'xnes';
    try {
      expect(categoricalMethods()).toEqual(METHOD_NAMES.filter((m) => m !== 'xnes'));
      expect(problems(spec([x(), cat(), cat({ name: 'd' })], { method: 'xnes', batch_size: 4 }))).toEqual([{ path: '/method', message: `xnes does not support categorical parameters (parameter 1, c, is one); methods that do: ${categoricalMethods().join(', ')}` }]);
      expect(problems(spec([x(), x({ name: 'y' })], { method: 'xnes', batch_size: 4 }))).toEqual([]);
    } finally {
      withoutCategorical.method = null;
    }
  });
});

describe('conditions', () => {
  const kernel = cat({ name: 'kernel', choices: ['linear', 'rbf', 1] });
  const gamma = (condition: unknown): Param => x({ name: 'gamma', condition });
  it.each<[string, Param[], FieldError[]]>([
    ['an unknown parent', [kernel, gamma({ parent: 'kern', values: ['rbf'] })], [{ path: '/parameters/1/condition/parent', message: 'no parameter of this study is named "kern"' }]],
    ['itself as parent', [kernel, gamma({ parent: 'gamma', values: ['rbf'] })], [{ path: '/parameters/1/condition/parent', message: 'a parameter cannot be its own parent' }]],
    ['a numeric parent', [kernel, x({ name: 'C' }), gamma({ parent: 'C', values: [1] })], [{ path: '/parameters/2/condition/parent', message: 'must name a categorical parameter; C is float (declare it categorical with its values as choices to condition on it)' }]],
    ['a value twice', [kernel, gamma({ parent: 'kernel', values: ['rbf', 'linear', 'rbf'] })], [{ path: '/parameters/1/condition/values/2', message: 'duplicates value 0' }]],
    ['a value of the wrong JSON type', [kernel, gamma({ parent: 'kernel', values: ['1'] })], [{ path: '/parameters/1/condition/values/0', message: '"1" is not a choice of kernel (["linear","rbf",1]; matched by value and JSON type)' }]],
    ['a cycle of two', [cat({ name: 'a', choices: [1, 2], condition: { parent: 'b', values: ['x'] } }), cat({ name: 'b', choices: ['x', 'y'], condition: { parent: 'a', values: [1] } })], [{ path: '/parameters/0/condition/parent', message: 'conditions form a cycle: a → b → a' }]],
    ['a cycle of three, reported once', [
      cat({ name: 'a', choices: [1], condition: { parent: 'c', values: [1] } }),
      cat({ name: 'b', choices: [1], condition: { parent: 'a', values: [1] } }),
      cat({ name: 'c', choices: [1], condition: { parent: 'b', values: [1] } }),
    ], [{ path: '/parameters/0/condition/parent', message: 'conditions form a cycle: a → c → b → a' }]],
    // x's parents lead into a cycle that does not come back to x: the walk from x stops after as many
    // steps as there are parameters, and the cycle is reported once, at its own first parameter.
    ['a chain into a cycle', [
      x({ condition: { parent: 'a', values: [1] } }),
      cat({ name: 'a', choices: [1, 2], condition: { parent: 'b', values: ['x'] } }),
      cat({ name: 'b', choices: ['x', 'y'], condition: { parent: 'a', values: [2] } }),
    ], [{ path: '/parameters/1/condition/parent', message: 'conditions form a cycle: a → b → a' }]],
  ])('%s', (_, parameters, expected) => {
    expect(problems(spec(parameters))).toEqual(expected);
  });

  it('a chain two deep and a number as a value of a number choice: passes', () => {
    expect(problems(spec([kernel, gamma({ parent: 'kernel', values: ['rbf', 1] }), cat({ name: 'deg', choices: [2, 3], condition: { parent: 'kernel', values: [1] } }), x({ name: 'coef0', condition: { parent: 'deg', values: [3] } })]))).toEqual([]);
  });
});

describe('the effective prior must be usable', () => {
  const variance = 'the prior variance (std², from the bounds\' width when derived) must be a positive finite double: std within about [1e-154, 1e154]';
  it.each<[string, StudySpecInput, FieldError[]]>([
    ['bounds whose width overflows (std from the bounds)', spec([x(), x({ name: 'y', bounds: [-1e308, 1e308] })]), [{ path: '/parameters/1/bounds', message: variance }]],
    // Its std (a quarter of the width) squares past the largest double too.
    ['bounds whose middle overflows', spec([x({ bounds: [1e308, 1.7e308] })]), [{ path: '/parameters/0/bounds', message: 'the prior mean (the middle of the bounds, when derived) overflows a double' }, { path: '/parameters/0/bounds', message: variance }]],
    ['a std whose square overflows', spec([x({ bounds: null, prior: { mean: 0, std: 1e200 } })]), [{ path: '/parameters/0/prior/std', message: variance }]],
    ['a std whose square underflows to 0', spec([x({ bounds: null, prior: { mean: 0, std: 1e-170 } })]), [{ path: '/parameters/0/prior/std', message: variance }]],
  ])('%s', (_, input, expected) => {
    expect(problems(input)).toEqual(expected);
  });
});

describe('the effective prior and its helpers', () => {
  it('derived from the bounds: the middle and a quarter of the transformed width; a categorical\'s probabilities normalised', () => {
    const { parameters, prior } = effectivePrior(spec([x({ bounds: [2, 6] }), cat({ prior: { probabilities: [1, 1, 2.000001] } }), x({ name: 'l', scale: 'log', bounds: [1, Math.E ** 4] })]));
    expect(prior.mean[0]).toBe(4);
    expect(prior.std[0]).toBe(1);
    expect(prior.mean[1]).toBeCloseTo(2, 14);
    expect(prior.std[1]).toBeCloseTo(1, 14);
    expect(prior.covariance[0]![1]).toBe(0);
    const probs = (parameters[1] as { prior: { probabilities: number[] } }).prior.probabilities;
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 15);
    expect(probs[2]! / probs[0]!).toBeCloseTo(2.000001, 12);
    expect(parameters[0]).toEqual({ name: 'x', type: 'float', scale: 'linear', bounds: [2, 6], step: null, prior: { mean: 4, std: 1 } });
    expect((effectivePrior(spec([cat()])).parameters[0] as { prior: { probabilities: number[] } }).prior.probabilities).toEqual([1 / 3, 1 / 3, 1 / 3]);
  });

  it('a joint prior symmetrised; conditions copied only onto conditional parameters', () => {
    const { parameters, prior } = effectivePrior(spec([cat({ name: 'k', choices: ['a', 'b'] }), x({ condition: { parent: 'k', values: ['b'] } })], { prior: { mean: [0.5], covariance: [[4]] } }));
    expect(prior).toEqual({ mean: [0.5], covariance: [[4]], std: [2] });
    expect(parameters[1]).toMatchObject({ condition: { parent: 'k', values: ['b'] }, prior: { mean: 0.5, std: 2 } });
    expect('condition' in parameters[0]!).toBe(false);
    expect(effectivePrior(spec([x(), x({ name: 'y' })], { prior: { mean: [0, 0], covariance: [[1, 0.3], [0.3 + 2e-9, 1]] } })).prior.covariance[0]![1]).toBeCloseTo(0.3 + 1e-9, 15);
  });

  it('numericIndices, usableStep and alignToGrid', () => {
    expect(numericIndices([{ type: 'categorical' }, { type: 'float' }, { type: 'int' }, { type: 'categorical' }])).toEqual([1, 2]);
    const p = (over: Param) => x(over) as never;
    expect(usableStep(p({ step: 0.1 }))).toBe(true);
    // The finest step allowed is usable (the bound itself, computed as the rule computes it).
    expect(usableStep(p({ bounds: [0, 1e6], step: 1e-8 * 1e6 }))).toBe(true);
    for (const bad of [{ step: null }, { bounds: null, step: 0.1 }, { scale: 'log', bounds: [1, 2], step: 0.1 }, { type: 'int', bounds: [0, 10], step: 1.5 }, { type: 'int', bounds: [0, 10.5], step: 2 }, { step: 0 }, { step: 2 }, { bounds: [1, 0], step: 0.1 }, { bounds: [0, 1e6], step: 1e-3 }, { bounds: [0, Infinity], step: 1 }]) {
      expect(usableStep(p(bad)), JSON.stringify(bad)).toBe(false);
    }
    const input = { parameters: [x({ bounds: [0, 1.05], step: 0.1 }), x({ name: 'y', step: 0.25 }), cat()] } as never as { parameters: Param[] };
    const aligned = alignToGrid(input as never) as { parameters: Param[] };
    expect(aligned.parameters[0]!.bounds).toEqual([0, 1]);
    expect(aligned.parameters[1]).toBe(input.parameters[1]);
    expect(aligned.parameters[2]).toBe(input.parameters[2]);
    const none = { parameters: [x()] } as never;
    expect(alignToGrid(none)).toBe(none);
  });
});
