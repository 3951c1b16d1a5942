/**
 * Study request and response schemas. The requests are the domain's (src/domain/studies/study-request.ts,
 * whose output types the study service accepts); here they get their examples, and the resource its schema.
 */
import { z } from 'zod';
import { METHOD_NAMES } from '../../engine/index.js';
import { CreateStudyRequest, ParameterValueSchema, PatchStudyRequest, PriorSourceSchema, STUDY_STATES, Timestamp, TRIAL_STATES } from '../../domain/index.js';
import { AllowRepeatsSchema, StoppingRuleSchema } from '../../domain/index.js';
import { NextPageToken } from './common.js';

const createExample = {
  name: 'resnet-lr',
  direction: 'minimize',
  parameters: [
    { name: 'log_lr', type: 'float', prior: { mean: -3, std: 1 }, bounds: [-8, 0] },
    { name: 'dropout', type: 'float', prior: { mean: 0.2, std: 0.1 }, bounds: [0, 0.9], step: 0.05 },
    { name: 'width', type: 'int', scale: 'log', prior: { mean: 4.85, std: 0.5 }, bounds: [16, 1024] },
  ],
  method: 'prob-cmaes',
  batch_size: 3,
  options: { profile: 'default' },
  seed: 7,
  max_trials: 200,
  metadata: { owner: 'team-a' },
};

/** Mixed: a categorical parameter with a prior over its choices, next to numeric ones (methods: see `method`). */
const categoricalExample = {
  name: 'mlp-optimizer',
  parameters: [
    { name: 'optimizer', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'], prior: { probabilities: [0.6, 0.2, 0.2] } },
    { name: 'lr', scale: 'log', bounds: [1e-5, 1] },
    { name: 'activation', type: 'categorical', choices: ['relu', 'tanh'] },
  ],
  method: 'bo',
};

/** Conditional: gamma only for the rbf kernel, degree only for poly (docs/conditional.md). */
const conditionalExample = {
  name: 'svc-conditional',
  parameters: [
    { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf', 'poly'] },
    { name: 'C', scale: 'log', bounds: [1e-3, 1e3] },
    { name: 'gamma', scale: 'log', bounds: [1e-4, 10], condition: { parent: 'kernel', values: ['rbf'] } },
    { name: 'degree', type: 'int', bounds: [2, 5], condition: { parent: 'kernel', values: ['poly'] } },
  ],
};

/** A prior fitted to points believed plausible (the second and third parameters of `createExample`). */
const fromPointsExample = {
  name: 'resnet-lr-from-points',
  parameters: [
    { name: 'lr', scale: 'log', bounds: [1e-5, 1] },
    { name: 'width', type: 'int', scale: 'log', bounds: [16, 1024] },
  ],
  prior: { from_points: [{ lr: 0.01, width: 64 }, { lr: 0.003, width: 128 }, { lr: 0.03, width: 64 }], weights: [2, 1, 1] },
  method: 'prob-cmaes',
};

/** A warm start: replace study_id by an earlier study of yours with the same parameters. */
const fromStudyExample = {
  name: 'resnet-lr-warm',
  parameters: [
    { name: 'lr', scale: 'log', bounds: [1e-5, 1] },
    { name: 'width', type: 'int', scale: 'log', bounds: [16, 1024] },
  ],
  prior: { from_study: { study_id: '0f8fad5b-d9cb-469f-a165-70867728950e', top_fraction: 0.1, include_observations: true } },
  method: 'prob-cmaes',
};

export const CreateStudyBody = CreateStudyRequest.meta({ examples: [createExample, categoricalExample, conditionalExample, fromPointsExample, fromStudyExample] });

export const PatchStudyBody = PatchStudyRequest.meta({ examples: [{ state: 'PAUSED' }] });

const ConditionOut = z
  .object({ parent: z.string(), values: z.array(ParameterValueSchema) })
  .describe('Present only on a conditional parameter: it is active (suggested, reported) only while `parent` is active and takes one of `values`.');

const NumericParameterOut = z.object({
  name: z.string(),
  type: z.enum(['float', 'int']),
  scale: z.enum(['linear', 'log']),
  bounds: z.tuple([z.number(), z.number()]).nullable(),
  step: z.number().nullable().describe('Values are low + k·step (the bounds\' high is on the grid): as given, 1 for an int without one, null for a continuous float.'),
  prior: z.object({ mean: z.number(), std: z.number() }).describe('Effective marginal prior, in the parameter\'s scale.'),
  condition: ConditionOut.optional(),
});

const CategoricalParameterOut = z.object({
  name: z.string(),
  type: z.literal('categorical'),
  choices: z.array(ParameterValueSchema),
  prior: z.object({ probabilities: z.array(z.number()) }).describe('Effective prior over the choices (uniform unless given), in the order of `choices`.'),
  condition: ConditionOut.optional(),
});

const ParameterOut = z.discriminatedUnion('type', [NumericParameterOut, CategoricalParameterOut]);

const exampleStudy = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  name: 'resnet-lr',
  direction: 'minimize',
  parameters: [{ name: 'log_lr', type: 'float', scale: 'linear', bounds: [-8, 0], step: null, prior: { mean: -3, std: 1 } }],
  prior: { mean: [-3], covariance: [[1]], std: [1] },
  method: 'cmaes',
  batch_size: 3,
  options: { sigma0: 1, active: true },
  seed: 7,
  max_trials: 200,
  lease_seconds: 600,
  known_optimum: null,
  metadata: { owner: 'team-a' },
  state: 'ACTIVE',
  reason: null,
  generation: 0,
  trial_counts: { REQUESTED: 0, ACTIVE: 0, COMPLETED: 0, FAILED: 0, ABANDONED: 0 },
  allow_repeats: false,
  stopping: { rule: 'median', min_steps: 5, warmup_trials: 5 },
  objectives: [{ name: 'value', direction: 'minimize' }],
  constraints: [],
  reference_point: null,
  created_at: '2025-01-01T12:00:00.000Z',
  updated_at: '2025-01-01T12:00:00.000Z',
};

export const StudySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    direction: z.enum(['minimize', 'maximize']),
    parameters: z.array(ParameterOut),
    prior: z
      .object({ mean: z.array(z.number()), covariance: z.array(z.array(z.number())), std: z.array(z.number()), source: PriorSourceSchema.optional() })
      .describe('Effective joint prior, in each parameter\'s scale (ln(value) for log-scaled ones), over the numeric parameters in parameter order (categorical ones have theirs in `parameters`).'),
    method: z.enum(METHOD_NAMES),
    batch_size: z.int(),
    options: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).describe('Effective options, defaults filled in.'),
    seed: z.int(),
    max_trials: z.int().nullable(),
    lease_seconds: z.int(),
    known_optimum: z.number().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    state: z.enum(STUDY_STATES),
    reason: z.string().nullable().describe('Why the study is in its state, e.g. paused_by_client; null when ACTIVE.'),
    generation: z.int(),
    trial_counts: z.object(Object.fromEntries(TRIAL_STATES.map((s) => [s, z.int()])) as Record<(typeof TRIAL_STATES)[number], z.ZodInt>),
    allow_repeats: AllowRepeatsSchema,
    stopping: StoppingRuleSchema.nullable(),
    objectives: z
      .array(z.object({ name: z.string(), direction: z.enum(['minimize', 'maximize']) }))
      .describe('The study\'s objectives in the order observations report them (docs/multi-objective.md); one named `value` for a study created with `direction` alone.'),
    constraints: z.array(z.object({ name: z.string() })).describe('The declared constraints (feasible when every value is ≤ 0), in the order observations report them.'),
    reference_point: z.array(z.number()).nullable().describe('The declared hypervolume reference point, in the objectives\' units; null: derived from the front (GET …/front says which).'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Study', examples: [exampleStudy] });

export const StudyListSchema = z
  .object({
    studies: z.array(StudySchema),
    next_page_token: NextPageToken,
  })
  .meta({ examples: [{ studies: [exampleStudy], next_page_token: null }] });

export type StudyResource = z.output<typeof StudySchema>;
