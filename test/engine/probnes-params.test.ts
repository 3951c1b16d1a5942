/**
 * ProbnesParams (strategies/probnes-params.ts): every option, public or bench, reaches a parameter
 * (none is accepted and then ignored), bad values are refused naming the option, the parameters are
 * frozen, and each profile resolves to exactly the parameters the release of version-1 states used
 * (its effective options are recorded in test/fixtures/states/v1, read here through the v1 mapping).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/engine/errors.js';
import type { MethodName } from '../../src/engine/strategies/methods.js';
import type { OptionSpec, OptionValue } from '../../src/engine/strategies/options.js';
import { PROBNES_OPTIONS, paramsFromV1Options, probnesBenchOptions, resolveProbnesParams, type ProbnesOwn } from '../../src/engine/strategies/probnes-params.js';
import type { StateFixture } from '../fixtures/states/record.js';

const OWN: Record<'prob-cmaes' | 'prob-xnes' | 'prob-snes', ProbnesOwn> = {
  'prob-cmaes': { learningRateCov: 0.5, optimumRadius: 3 },
  'prob-xnes': { learningRateCov: 0.5, optimumRadius: 2 },
  'prob-snes': { learningRateCov: 1, optimumRadius: 2 },
};
const METHODS = Object.keys(OWN) as (keyof typeof OWN)[];

/** Two different valid values of `spec` (so one of them differs from any default). */
function twoValues(spec: OptionSpec): [OptionValue, OptionValue] {
  switch (spec.kind) {
    case 'boolean':
      return [true, false];
    case 'enum':
      return [spec.values[0]!, spec.values[1]!];
    case 'number': {
      const at = (f: number) => (spec.integer ? Math.round(spec.min + 1 + f * (spec.max - spec.min - 1)) : spec.min + f * (spec.max - spec.min));
      return [at(0.1), at(0.2)];
    }
  }
}

describe('ProbnesParams', () => {
  it.each(METHODS)('%s: every public and bench option changes the parameters (none is ignored)', (method) => {
    const specs = { ...PROBNES_OPTIONS, ...probnesBenchOptions(method) };
    for (const [key, spec] of Object.entries(specs)) {
      for (const profile of ['default', 'paper']) {
        const ref = resolveProbnesParams(method, OWN[method], { profile }, 2);
        // The start phase's own switches, and the restarts of the search after it, act when the phase is on (ALGORITHM.md §29, §33).
        const phase = key.startsWith('start_phase_') || key.startsWith('restart_') ? { start_phase: 'powell' } : {};
        // start_phase_points is clamped to 2d + 1 … (d + 1)(d + 2)/2: 5 and 6 at d = 2.
        const values = key === 'start_phase_points' ? [5, 6] : twoValues(spec);
        const [a, b] = values.map((v) => resolveProbnesParams(method, OWN[method], key === 'profile' ? { profile: v } : { profile, ...phase, [key]: v }, 2));
        // Two values of the option give two parameter sets, and one of them is not the profile's.
        expect(a, `${method} ${profile} ${key}`).not.toEqual(b);
        expect([a, b].some((p) => JSON.stringify(p) !== JSON.stringify(ref)), `${method} ${profile} ${key}`).toBe(true);
      }
    }
    expect(Object.isFrozen(resolveProbnesParams(method, OWN[method], {}, 2))).toBe(true);
  });

  it('refuses an unknown option, a retired one and a value outside its spec, naming the option', () => {
    const resolve = (o: Record<string, OptionValue>) => () => resolveProbnesParams('prob-cmaes', OWN['prob-cmaes'], o, 2);
    expect(resolve({ nonsense: 1 })).toThrow(InvalidInputError);
    expect(resolve({ nonsense: 1 })).toThrow(/nonsense is not an option of method prob-cmaes/);
    expect(resolve({ mean_basis: 'loo' })).toThrow(/mean_basis is not an option/);
    expect(resolve({ snes_form: 'natural' })).toThrow(/snes_form is not an option of method prob-cmaes/);
    expect(resolve({ candidates: 0 })).toThrow(/option candidates of method prob-cmaes must be ≥ 1/);
    expect(resolve({ active_set_cap: 1.5 })).toThrow(/active_set_cap .* must be an integer/);
    expect(resolve({ learning_rate_mean: 0 })).toThrow(/learning_rate_mean .* must be > 0/);
    expect(resolve({ mean_step: 'sideways' })).toThrow(/mean_step .* must be one of natural, line/);
    expect(resolve({ include_mean: 'yes' })).toThrow(/include_mean .* must be a boolean/);
    expect(resolve({ profile: 'fast' })).toThrow(/profile/);
  });

  it.each([
    ['prob-cmaes-default', 'prob-cmaes', 'default'],
    ['prob-xnes-default', 'prob-xnes', 'default'],
    ['prob-snes-default', 'prob-snes', 'default'],
    ['prob-cmaes-paper', 'prob-cmaes', 'paper'],
    ['prob-xnes-paper', 'prob-xnes', 'paper'],
    ['prob-snes-paper', 'prob-snes', 'paper'],
  ] as const)('%s: the profile resolves to the parameters of the release of version-1 states', (fixture, method, profile) => {
    const f = JSON.parse(readFileSync(new URL(`../fixtures/states/v1/${fixture}.json`, import.meta.url), 'utf8')) as StateFixture;
    const options = (f.state as unknown as { options: Record<string, unknown> }).options;
    expect(options.profile).toBe(profile);
    expect(resolveProbnesParams(method as MethodName, OWN[method], { profile }, 2)).toEqual(paramsFromV1Options(method as MethodName, OWN[method], options));
  });
});
