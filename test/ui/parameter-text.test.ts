/**
 * The study facts' line per parameter (src/ui/api.js parameterText, a browser module with no DOM use
 * at import): type, scale, bounds, step, and a conditional parameter's condition, "only when
 * kernel ∈ {rbf}", its choices as the parent names them (a string quoted only where it would read
 * as something else).
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain browser ES module without type declarations
import { choiceText as choiceTextJs, conditionText as conditionTextJs, parameterText as parameterTextJs } from '../../src/ui/api.js';

type Param = Record<string, unknown>;
const parameterText = parameterTextJs as (p: Param) => string;
const conditionText = conditionTextJs as (p: Param) => string;
const choiceText = choiceTextJs as (v: unknown) => string;

describe('parameterText', () => {
  it('keeps the line of a parameter without a condition as it was', () => {
    expect(parameterText({ name: 'C', type: 'float', scale: 'log', bounds: [0.001, 1000], step: null })).toBe('C: float log [0.001, 1000]');
    expect(parameterText({ name: 'n', type: 'int', scale: 'linear', bounds: [1, 9], step: 1 })).toBe('n: int [1, 9]');
    expect(parameterText({ name: 'depth', type: 'int', scale: 'linear', bounds: [2, 16], step: 2 })).toBe('depth: int [2, 16] step 2');
    expect(parameterText({ name: 'kernel', type: 'categorical', choices: ['linear', 'rbf'] })).toBe('kernel: categorical, 2 choices');
    expect(conditionText({ name: 'C', type: 'float' })).toBe('');
  });

  it('adds the condition of a numeric parameter after its step', () => {
    expect(parameterText({ name: 'gamma', type: 'float', scale: 'log', bounds: [0.0001, 10], step: null, condition: { parent: 'kernel', values: ['rbf'] } }))
      .toBe('gamma: float log [0.0001, 10], only when kernel ∈ {rbf}');
    expect(parameterText({ name: 'dropout', type: 'float', scale: 'linear', bounds: [0, 0.5], step: 0.05, condition: { parent: 'layers', values: [2, 3] } }))
      .toBe('dropout: float [0, 0.5] step 0.05, only when layers ∈ {2, 3}');
  });

  it('adds the condition of a categorical parameter after its number of choices (a nested parent shows its own)', () => {
    expect(parameterText({ name: 'layers', type: 'categorical', choices: [1, 2, 3], condition: { parent: 'model', values: ['net'] } }))
      .toBe('layers: categorical, 3 choices, only when model ∈ {net}');
    expect(parameterText({ name: 'flag', type: 'categorical', choices: [true], condition: { parent: 'model', values: ['net', 'tree'] } }))
      .toBe('flag: categorical, 1 choice, only when model ∈ {net, tree}');
  });

  it('quotes a string choice only where it would read as another value or break the list', () => {
    expect(choiceText('rbf')).toBe('rbf');
    expect(choiceText(3)).toBe('3');
    expect(choiceText(false)).toBe('false');
    for (const s of ['3', 'false', 'true', '', ' rbf', 'a, b', 'x}', '{y', 'say "hi"', '1e3']) expect(choiceText(s), s).toBe(JSON.stringify(s));
    expect(conditionText({ name: 'w', condition: { parent: 'p', values: ['3', 3, 'a, b'] } })).toBe('only when p ∈ {"3", 3, "a, b"}');
  });

  it('gives markup in a choice as text (the page inserts the line as a text node)', () => {
    expect(conditionText({ name: 'w', condition: { parent: 'p', values: ['<b>x</b>'] } })).toBe('only when p ∈ {<b>x</b>}');
  });
});
