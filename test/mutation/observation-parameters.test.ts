/**
 * A point given by name (src/domain/loop/observations.ts checkParameters: external observations and
 * imported trials): every active parameter and nothing else, each value checked against its
 * parameter, every problem at its pointer with the message a client shows. The HTTP tests reach
 * this through whole requests and match the messages loosely.
 */
import { describe, expect, it } from 'vitest';
import { checkParameters } from '../../src/domain/loop/observations.js';
import { effectivePrior, type StudySpecInput } from '../../src/domain/studies/study-spec.js';
import { searchSpace, type SearchSpace } from '../../src/domain/studies/transforms.js';
import type { FieldError } from '../../src/domain/common/errors.js';
import type { ParamValue } from '../../src/domain/studies/study-request.js';

function spaceOf(parameters: Record<string, unknown>[]): SearchSpace {
  const { parameters: specs, prior } = effectivePrior({ name: 's', direction: 'minimize', method: 'random', batch_size: 1, options: {}, parameters, prior: null } as unknown as StudySpecInput);
  return searchSpace(specs, prior);
}

const problems = (space: SearchSpace, named: Record<string, ParamValue>): FieldError[] => {
  const errors: FieldError[] = [];
  checkParameters(space, named, '/observations/0/parameters', errors);
  return errors;
};
const at = (name: string) => `/observations/0/parameters/${name}`;

describe('a conditional space', () => {
  const space = spaceOf([
    { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf'] },
    { name: 'gamma', type: 'float', scale: 'linear', bounds: [0, 1], condition: { parent: 'kernel', values: ['rbf'] } },
    { name: 'C', type: 'float', scale: 'linear', bounds: [0, 10] },
  ]);
  const gammaRule = 'gamma applies only when kernel is one of ["rbf"]';

  it.each<[string, Record<string, ParamValue>, FieldError[]]>([
    ['the first choice, its child left out', { kernel: 'linear', C: 1 }, []],
    ['the second choice with its child', { kernel: 'rbf', gamma: 0.5, C: 1 }, []],
    ['an inactive child given', { kernel: 'linear', gamma: 0.5, C: 1 }, [{ path: at('gamma'), message: `inactive here: ${gammaRule}; leave it out` }]],
    ['an active child missing', { kernel: 'rbf', C: 1 }, [{ path: at('gamma'), message: `missing: active here (${gammaRule}), so it needs a value` }]],
    ['an unconditional parameter missing', { kernel: 'linear' }, [{ path: at('C'), message: 'missing: every parameter needs a value' }]],
    ['a name the study lacks', { kernel: 'linear', C: 1, Cc: 2 }, [{ path: at('Cc'), message: 'not a parameter of this study' }]],
    ['a value that is not a choice (nor its children then active)', { kernel: 'poly', C: 1 }, [{ path: at('kernel'), message: 'must be one of the choices ["linear","rbf"] (matched by value and JSON type)' }]],
  ])('%s', (_, named, expected) => {
    expect(problems(space, named)).toEqual(expected);
  });
});

describe('a plain space', () => {
  const space = spaceOf([
    { name: 'x', type: 'float', scale: 'linear', bounds: [0, 1] },
    { name: 'n', type: 'int', scale: 'linear', bounds: [1, 10] },
    { name: 'lr', type: 'float', scale: 'log', bounds: null, prior: { mean: 0, std: 1 } },
    { name: 's', type: 'float', scale: 'linear', bounds: [0, 1], step: 0.25 },
    { name: 'c', type: 'categorical', choices: [1, '1'] },
  ]);
  const ok: Record<string, ParamValue> = { x: 0.5, n: 3, lr: 0.1, s: 0.75, c: 1 };

  it.each<[string, Record<string, ParamValue>, FieldError[]]>([
    ['every value good, a choice at index 0', ok, []],
    ['a missing parameter', { x: 0.5, n: 3, lr: 0.1, s: 0.75 }, [{ path: at('c'), message: 'missing: every parameter needs a value' }]],
    ['a string for a number', { ...ok, x: '0.5' }, [{ path: at('x'), message: 'must be a finite number' }]],
    ['outside the bounds', { ...ok, x: 1.5 }, [{ path: at('x'), message: 'must lie within the bounds [0, 1]' }]],
    ['a fraction for an int', { ...ok, n: 2.5 }, [{ path: at('n'), message: 'must be an integer (int parameter)' }]],
    ['0 on a log scale without bounds', { ...ok, lr: 0 }, [{ path: at('lr'), message: 'must be > 0 (log-scaled parameter)' }]],
    ['off the grid', { ...ok, s: 0.3 }, [{ path: at('s'), message: 'must be on the grid 0 + k·0.25 (nearest: 0.25 or 0.5)' }]],
    ['"1" where the choice is the number 1 is the other choice', { ...ok, c: '1' }, []],
    ['a choice of the wrong JSON type', { ...ok, c: true }, [{ path: at('c'), message: 'must be one of the choices [1,"1"] (matched by value and JSON type)' }]],
  ])('%s', (_, named, expected) => {
    expect(problems(space, named)).toEqual(expected);
  });

  it('the same space checked twice gives the same answer (its names are cached per space)', () => {
    expect(problems(space, { ...ok, y: 1 })).toEqual([{ path: at('y'), message: 'not a parameter of this study' }]);
    expect(problems(space, { ...ok, y: 1 })).toEqual([{ path: at('y'), message: 'not a parameter of this study' }]);
  });
});
