/** Trial resource and listing schemas (docs/API.md "Resources"). */
import { z } from 'zod';
import { ParameterValueSchema, Timestamp, trialFields, TRIAL_STATES, type ReportedTrial } from '../../domain/index.js';
import { isStopped, valuesOf } from '../../domain/index.js';
import { NextPageToken, PageQuery, StudyIdParams } from './common.js';

const exampleTrial = {
  trial_id: 12,
  state: 'COMPLETED',
  parameters: { log_lr: -2.7, dropout: 0.18, width: 128 },
  generation: 4,
  client_id: 'worker-1',
  lease_expires_at: null,
  value: 0.731,
  stderr: null,
  failure_reason: null,
  late: false,
  source: 'suggested',
  created_at: '2025-01-01T12:00:00.000Z',
  completed_at: '2025-01-01T12:03:10.000Z',
  stopped: false,
  loss: 0.731,
  values: [0.731],
  constraints: null,
  infeasible: false,
  feasible: true,
  losses: [0.731],
};

export const TrialSchema = z
  .object({
    trial_id: z.int().describe('Numbered per study: 1, 2, 3, …'),
    state: z.enum(TRIAL_STATES),
    parameters: z.record(z.string(), ParameterValueSchema).describe('The point, in user units, keyed by parameter name (a categorical parameter\'s value is one of its choices).'),
    generation: z.int().describe('The generation whose distribution produced the point.'),
    client_id: z.string().nullable().describe('Who holds (or held) the lease.'),
    lease_expires_at: Timestamp.nullable().describe('Until when an ACTIVE trial is leased; null otherwise.'),
    value: z.number().nullable().describe('The reported objective value (COMPLETED only).'),
    stderr: z.number().nullable().describe('Reported standard error of the value, if any.'),
    failure_reason: z.string().nullable().describe('Why the trial was FAILED (the client\'s reason) or ABANDONED: superseded (its generation\'s distribution was updated without it), study_completed, or abandoned_by_client.'),
    late: z
      .boolean()
      .describe(
        'The result arrived after the service had given the trial up (ABANDONED as superseded, when its generation\'s distribution was updated without it, or when the study completed). ' +
          'It was accepted all the same: the trial is COMPLETED, counts toward max_trials, and its value joins the model\'s data like an external observation (not its generation\'s update, which was already made).',
      ),
    source: z.enum(['suggested', 'external']).describe('`external`: reported by parameters, not handed out by the server.'),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    stopped: z
      .boolean()
      .describe('COMPLETED by a worker that stopped it early (observation with "stopped": true, failure_reason stopped_early): its value is the last intermediate value, as reported. The methods read it as the worse of that value and the median of the results completed before it (docs/ALGORITHM.md §31).'),
    loss: z
      .number()
      .nullable()
      .describe('The value oriented so that lower is better: the value when the study minimises, its negation when it maximises (null without a value). Sort, rank or keep the best of trials by it without reading the direction.'),
    values: z.array(z.number()).nullable().describe('The objectives\' values in the order the study declares them ([value] for one objective); null without a result (docs/multi-objective.md).'),
    constraints: z.array(z.number()).nullable().describe('The constraint values reported with the result (feasible when every one is ≤ 0); null when the study declares none or without a result.'),
    infeasible: z.boolean().describe('Reported infeasible: the point could not be evaluated, so it has no value (the methods learn to avoid it). A crash is FAILED instead.'),
    feasible: z.boolean().nullable().describe('A result that was not reported infeasible and meets every constraint; false for one that does not; null without a result. /best and the front count feasible trials only.'),
    losses: z.array(z.number()).nullable().describe('`values` oriented so that lower is better, objective by objective (maximised ones negated): rank and plot by these without reading the directions.'),
  })
  .meta({ id: 'Trial', examples: [exampleTrial] });

export const IntermediateValueSchema = z.object({ step: z.int(), value: z.number() });

export const TrialWithCurveSchema = TrialSchema.extend({
  intermediate_values: z.array(IntermediateValueSchema).describe('What the trial reported while it ran (POST …/intermediate), by step.'),
}).meta({ id: 'TrialWithCurve' });

export const TrialListSchema = z
  .object({
    trials: z.array(TrialSchema),
    next_page_token: NextPageToken,
  })
  .meta({ examples: [{ trials: [exampleTrial], next_page_token: null }] });

export const TrialListQuery = PageQuery.extend({
  state: z.enum(TRIAL_STATES).optional().describe('Only trials in this state.'),
});

export const TrialParams = StudyIdParams.extend({
  trial_id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe('The trial id within the study.'),
});

export type TrialResource = z.output<typeof TrialSchema>;

/** The domain's trial fields (src/domain/transfer/trial-fields.ts, shared with the study document), whether it was stopped early, and its loss. */
export const toTrialResource = (t: ReportedTrial): TrialResource => ({
  ...trialFields(t),
  stopped: isStopped(t),
  loss: t.loss,
  values: valuesOf(t),
  constraints: t.constraints ?? null,
  infeasible: t.infeasible === true,
  feasible: t.feasible,
  losses: t.losses,
});
