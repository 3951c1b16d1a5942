/**
 * The intermediate-value request of a running trial: `{"step": s, "value": v}`. Its structure is
 * checked here; what depends on the trial (its state, a value already stored for the step) is
 * intermediate.ts's.
 */
import { z } from 'zod';

/** Steps are non-negative 31-bit integers (epochs, iterations, seconds: any monotone counter). */
export const MAX_STEP = 2 ** 31 - 1;

export const IntermediateRequest = z.strictObject({
  step: z.int().min(0).max(MAX_STEP).describe(`The step the value belongs to (an integer in [0, ${MAX_STEP}]: an epoch, an iteration count). One value per step.`),
  value: z.number().describe('The objective at that step, in the study\'s direction (finite).'),
});

export type IntermediateInput = z.output<typeof IntermediateRequest>;
