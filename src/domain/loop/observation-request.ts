/**
 * The observations request: a batch of results, by trial id for suggested points or by parameters
 * for points evaluated elsewhere. Its structure is checked here; everything that depends on the
 * study (bounds, duplicates, trial states) is observations.ts's. The loop accepts this schema's output.
 */
import { z } from 'zod';
import { cappedRecord, hasMoreKeys, keysMessage, MAX_ERRORS } from '../common/schemas.js';
import { ValidationError } from '../common/errors.js';
import { ChoiceValue, LIMITS, PARAMETER_NAME } from '../studies/study-request.js';
import { MAX_CONSTRAINTS, MAX_OBJECTIVES } from '../results/outcomes.js';

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

const Values = z
  .array(z.number())
  .min(1)
  .max(MAX_OBJECTIVES)
  .describe('A study of several objectives: one finite value per objective, in the order the study declares them (docs/multi-objective.md).');
const Constraints = z
  .array(z.number())
  .max(MAX_CONSTRAINTS)
  .optional()
  .describe('A study with constraints: one value per constraint, in the order declared; the point is feasible when every value is ≤ 0.');
const Infeasible = z
  .boolean()
  .optional()
  .describe('true: the point cannot be evaluated (training diverged, out of memory). No value goes with it; the trial is COMPLETED and infeasible, and the methods learn to avoid the region (docs/ALGORITHM.md §32.4). A crash to ignore is a FAILED trial instead.');

/** One result: a value, values, or infeasible, exactly one of them. */
function oneResult(o: { value?: number; values?: number[]; infeasible?: boolean; stderr?: number | null; constraints?: number[] }, ctx: z.RefinementCtx): void {
  const given = [o.value !== undefined, o.values !== undefined, o.infeasible === true].filter(Boolean).length;
  if (given === 0) ctx.addIssue({ code: 'custom', path: ['value'], message: 'missing: give `value` (one objective), `values` (several) or `infeasible: true`' });
  else if (given > 1) ctx.addIssue({ code: 'custom', path: [o.infeasible === true ? 'infeasible' : 'values'], message: o.infeasible === true ? 'an infeasible point has no value: leave out `value` and `values`' : 'give `value` or `values`, not both' });
  if (o.infeasible === true && o.constraints !== undefined) ctx.addIssue({ code: 'custom', path: ['constraints'], message: 'an infeasible point has no constraint values' });
  if (o.infeasible === true && o.stderr !== undefined && o.stderr !== null) ctx.addIssue({ code: 'custom', path: ['stderr'], message: 'an infeasible point has no value, so no standard error' });
}

const ByTrial = z
  .strictObject({ trial_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER), value: Value.optional(), values: Values.optional(), constraints: Constraints, infeasible: Infeasible, stderr: Stderr, stopped: Stopped })
  .superRefine(oneResult);
const ByParameters = z.strictObject({
  // The key count is also checked first, before any value, by countParameterKeys (the route's
  // preValidation): a refinement runs after the values, and a preprocess step would cost the
  // OpenAPI document this body's example (zod omits examples of schemas that transform their input).
  parameters: cappedRecord(z.string().regex(PARAMETER_NAME), ChoiceValue, LIMITS.parameters)
    .describe('Every parameter of the study, in user units, inside its bounds; int parameters integral; a categorical parameter one of its choices.'),
  value: Value.optional(),
  values: Values.optional(),
  constraints: Constraints,
  infeasible: Infeasible,
  stderr: Stderr,
}).superRefine(oneResult);

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
