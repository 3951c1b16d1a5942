/**
 * The observations request: a batch of results, by trial id for suggested points or by parameters
 * for points evaluated elsewhere. Its structure is checked here; everything that depends on the
 * study (bounds, duplicates, trial states) is observations.ts's. The loop accepts this schema's output.
 */
import { z } from 'zod';
import { cappedRecord, hasMoreKeys, keysMessage, MAX_ERRORS } from '../common/schemas.js';
import { ValidationError } from '../common/errors.js';
import { ChoiceValue, LIMITS, PARAMETER_NAME } from '../studies/study-request.js';

/** Largest observation batch: big enough for any evaluation farm, small enough to validate at once. */
export const MAX_OBSERVATIONS = 1000;

const Value = z.number().describe('The objective value (finite).');
const Stderr = z
  .number()
  .min(0)
  .nullish()
  .describe("Standard error of the value, if known, in the value's units. The ProbNES methods take it as known noise: its square joins their GP's noise at that point (docs/ALGORITHM.md §28). The other methods ignore it; it is stored with the trial either way.");

const Stopped = z
  .boolean()
  .optional()
  .describe('The worker stopped the evaluation early (told so by POST …/intermediate, or on its own): `value` is its last intermediate value. The trial is COMPLETED with failure_reason stopped_early and keeps that value; the methods read it as the worse of the value and the median of the results completed before it, not as a finished result (docs/ALGORITHM.md §31).');

const ByTrial = z.strictObject({ trial_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER), value: Value, stderr: Stderr, stopped: Stopped });
const ByParameters = z.strictObject({
  // The key count is also checked first, before any value, by countParameterKeys (the route's
  // preValidation): a refinement runs after the values, and a preprocess step would cost the
  // OpenAPI document this body's example (zod omits examples of schemas that transform their input).
  parameters: cappedRecord(z.string().regex(PARAMETER_NAME), ChoiceValue, LIMITS.parameters)
    .describe('Every parameter of the study, in user units, inside its bounds; int parameters integral; a categorical parameter one of its choices.'),
  value: Value,
  stderr: Stderr,
});

export const ObservationsRequest = z.strictObject({
  observations: z
    .array(z.union([ByTrial, ByParameters]))
    .min(1)
    .max(MAX_OBSERVATIONS)
    .describe(`1–${MAX_OBSERVATIONS} results; by trial_id for suggested points, by parameters for points evaluated elsewhere.`),
});

/** One result of the batch. */
export type ObservationInput = z.output<typeof ObservationsRequest>['observations'][number];

/**
 * Refuses, before the schema reads any value, a point given by parameters with more keys than a study
 * can have parameters: one such point of 10⁵ wrong values would otherwise cost 10⁵ value checks.
 * Looks only at the first MAX_OBSERVATIONS elements (the schema refuses a longer batch).
 */
export function countParameterKeys(body: unknown): void {
  const observations = (body as { observations?: unknown } | null)?.observations;
  if (!Array.isArray(observations)) return;
  const errors: { path: string; message: string }[] = [];
  for (let i = 0; i < Math.min(observations.length, MAX_OBSERVATIONS); i++) {
    const parameters = (observations[i] as { parameters?: unknown } | null)?.parameters;
    if (hasMoreKeys(parameters, LIMITS.parameters)) errors.push({ path: `/observations/${i}/parameters`, message: keysMessage(LIMITS.parameters) });
    if (errors.length >= MAX_ERRORS) break;
  }
  if (errors.length > 0) throw new ValidationError(errors);
}
