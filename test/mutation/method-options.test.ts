/**
 * The per-method option schemas (src/domain/studies/method-options.ts), built from each strategy's
 * descriptor: ranges with their open or closed ends, integers, enums and booleans; unknown keys named
 * at their own path; a stored study's (an exported document's) options may also hold the benchmark
 * switches and the retired options that earlier releases accepted; and the OpenAPI text listing them.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addOptionIssues, optionsDocumentation, optionsSchemaFor, type OptionsSource } from '../../src/domain/studies/method-options.js';
import type { MethodName } from '../../src/engine/index.js';

/** The issues addOptionIssues adds for `options`, as path and message. */
function issues(method: MethodName, options: Record<string, unknown>, source?: OptionsSource): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  z.object({ options: z.unknown() })
    .superRefine((_, ctx) => addOptionIssues(method, options, ctx, source))
    .safeParse({ options })
    .error?.issues.forEach((i) => out.push({ path: i.path.join('/'), message: i.message }));
  return out;
}
const ok = (method: MethodName, options: Record<string, unknown>, source?: OptionsSource) => expect(issues(method, options, source), JSON.stringify(options)).toEqual([]);

describe('a method\'s options', () => {
  it('a number range closed at both ends: its ends pass, beyond them is refused at the option\'s path', () => {
    ok('pibo', { beta: 0 });
    ok('pibo', { beta: 1000 });
    expect(issues('pibo', { beta: -0.001 }).map((i) => i.path)).toEqual(['options/beta']);
    expect(issues('pibo', { beta: 1000.5 }).map((i) => i.path)).toEqual(['options/beta']);
  });

  it('a range open at its low end: the end itself is refused, just above it passes', () => {
    expect(issues('cmaes', { sigma0: 0 }).map((i) => i.path)).toEqual(['options/sigma0']);
    ok('cmaes', { sigma0: 1e-9 });
    ok('cmaes', { sigma0: 1000 });
    expect(issues('lq-cmaes', { tau_threshold: -1 }).map((i) => i.path)).toEqual(['options/tau_threshold']);
    ok('lq-cmaes', { tau_threshold: -0.999 });
  });

  it('integers: a fraction is refused; enums and booleans take their values only', () => {
    ok('prob-cmaes', { candidates: 1, active_set_cap: 0, gp_restarts: 20 });
    expect(issues('prob-cmaes', { candidates: 1.5 }).map((i) => i.path)).toEqual(['options/candidates']);
    expect(issues('prob-cmaes', { candidates: 0 }).map((i) => i.path)).toEqual(['options/candidates']);
    ok('prob-cmaes', { profile: 'paper', start_phase: 'off' });
    expect(issues('prob-cmaes', { profile: 'fast' }).map((i) => i.path)).toEqual(['options/profile']);
    ok('cmaes', { active: false });
    expect(issues('cmaes', { active: 'yes' }).map((i) => i.path)).toEqual(['options/active']);
  });

  it('every problem at once, an unknown key named as not an option of the method', () => {
    expect(issues('random', { sigma0: 1 })).toEqual([{ path: 'options/sigma0', message: 'not an option of method random' }]);
    const all = issues('cmaes', { sigma0: -1, foo: 1, bar: 2 });
    expect(all).toHaveLength(3);
    expect(all).toContainEqual({ path: 'options/foo', message: 'not an option of method cmaes' });
    expect(all).toContainEqual({ path: 'options/bar', message: 'not an option of method cmaes' });
    expect(all.filter((i) => i.path === 'options/sigma0')).toHaveLength(1);
  });

  it('a stored study\'s options may hold the benchmark switches (checked by their specs) and the retired options (any value); a request\'s may not', () => {
    expect(issues('prob-cmaes', { gradient_samples: 100 })).toEqual([{ path: 'options/gradient_samples', message: 'not an option of method prob-cmaes' }]);
    ok('prob-cmaes', { gradient_samples: 100 }, 'stored');
    expect(issues('prob-cmaes', { gradient_samples: 'many' }, 'stored').map((i) => i.path)).toEqual(['options/gradient_samples']);
    expect(issues('prob-cmaes', { mean_basis: 'anything' })).toEqual([{ path: 'options/mean_basis', message: 'not an option of method prob-cmaes' }]);
    ok('prob-cmaes', { mean_basis: 'anything', optimum_gate: [1, 2] }, 'stored');
    expect(issues('cmaes', { mean_basis: 1 }, 'stored')).toEqual([{ path: 'options/mean_basis', message: 'not an option of method cmaes' }]);
    // The API's options stay valid in a stored study.
    ok('prob-cmaes', { candidates: 10 }, 'stored');
    expect(issues('prob-cmaes', { candidates: 0 }, 'stored').map((i) => i.path)).toEqual(['options/candidates']);
  });

  it('one schema per method and source, built once', () => {
    expect(optionsSchemaFor('bo')).toBe(optionsSchemaFor('bo', 'request'));
    expect(optionsSchemaFor('bo', 'stored')).toBe(optionsSchemaFor('bo', 'stored'));
    expect(optionsSchemaFor('bo', 'stored')).not.toBe(optionsSchemaFor('bo'));
    expect(optionsSchemaFor('pibo')).not.toBe(optionsSchemaFor('bo'));
  });
});

describe('the options\' documentation', () => {
  it('one line per method: ranges with their open or closed ends, integers, enums, booleans, or no options', () => {
    const lines = optionsDocumentation().split('\n');
    expect(lines).toHaveLength(10);
    expect(lines).toContain('- `random`: no options');
    expect(lines).toContain('- `cmaes`: `sigma0` (number in (0, 1000]), `active` (boolean)');
    expect(lines).toContain('- `pibo`: `candidates` (integer in [10, 100000]), `mc_samples` (integer in [16, 4096]), `box_std` (number in (0, 20]), `beta` (number in [0, 1000])');
    expect(lines[0]).toBe('- `prob-cmaes`: `profile` ("default" | "paper"), `start_phase` ("powell" | "off"), `learning_rate_mean` (number in (0, 10]), `learning_rate_cov` (number in (0, 10]), `learning_rate_cov_quadratic` (number in (0, 10]), `candidates` (integer in [1, 100000]), `active_set_cap` (integer in [0, 100000]), `gp_restarts` (integer in [0, 20])');
  });
});
