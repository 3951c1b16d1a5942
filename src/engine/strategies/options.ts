/**
 * Study options as plain data: the kinds an option may have, their check, and the options BO and πBO
 * share. Each strategy's descriptor (registry.ts) names the options it accepts and their defaults;
 * the HTTP layer builds its zod schemas from them (unknown options are rejected there), and
 * `resolveOptions` fills in the defaults, which for the ProbNES methods depend on `profile`
 * (probnes-params.ts). A strategy reads its options once, at init, into typed parameters kept in its
 * state; nothing reads an option by name after that.
 */
import { InvalidInputError } from '../errors.js';

export type OptionSpec =
  | { kind: 'number'; min: number; max: number; exclusiveMin?: boolean; integer?: boolean; description: string }
  | { kind: 'enum'; values: readonly string[]; description: string }
  | { kind: 'boolean'; description: string };

export type OptionValue = number | string | boolean;
export type Options = Record<string, OptionValue>;
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export const etaMean: OptionSpec = { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_μ, step size of the mean update.' };
export const etaCov: OptionSpec = { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_Σ, step size of the covariance update.' };

/** Why `value` does not fit `spec`, or null when it does (the engine's own check; the API checks with zod first). */
export function optionProblem(spec: OptionSpec, value: OptionValue): string | null {
  switch (spec.kind) {
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a finite number';
      if (spec.integer && !Number.isInteger(value)) return 'must be an integer';
      if (spec.exclusiveMin ? !(value > spec.min) : !(value >= spec.min)) return `must be ${spec.exclusiveMin ? '>' : '≥'} ${spec.min}`;
      return value <= spec.max ? null : `must be ≤ ${spec.max}`;
    }
    case 'enum':
      return typeof value === 'string' && spec.values.includes(value) ? null : `must be one of ${spec.values.join(', ')}`;
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
  }
}

/**
 * Checks every given option against `specs` (a key it does not name is refused, as the API refuses
 * it) and returns them; strategies resolve their typed parameters from the result once, at init.
 */
export function checkedOptions(method: string, specs: OptionSpecs, given: Options): Options {
  for (const [key, value] of Object.entries(given)) {
    const spec = specs[key];
    if (!spec) throw new InvalidInputError(`${key} is not an option of method ${method}`);
    const problem = optionProblem(spec, value);
    if (problem) throw new InvalidInputError(`option ${key} of method ${method} ${problem}, got ${JSON.stringify(value)}`);
  }
  return given;
}

/** The options of BO (πBO adds `beta`). */
export const BO_OPTIONS: OptionSpecs = {
  candidates: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Random candidates scored by the acquisition before local refinement.' },
  mc_samples: { kind: 'number', min: 16, max: 4096, integer: true, description: 'Monte Carlo samples for batch expected improvement (q-EI).' },
  box_std: { kind: 'number', min: 0, max: 20, exclusiveMin: true, description: 'Half-width of the search box in prior standard deviations when a parameter has no bounds.' },
};

export const BO_DEFAULTS: Readonly<Options> = { candidates: 2000, mc_samples: 256, box_std: 3 };
