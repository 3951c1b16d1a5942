/**
 * Study request and response schemas. Structure, types and ranges are checked here; the rules that
 * span fields (bounds against priors, the joint covariance, batch size against the method) are the
 * domain's (src/domain/studies/study-spec.ts), so any transport gets them.
 */
import { z } from 'zod';
import { DEFAULT_METHOD, METHOD_NAMES, type MethodName } from '../../engine/index.js';
import { MAX_SEED } from '../../domain/index.js';
import { STUDY_STATES, TRIAL_STATES } from '../../domain/index.js';
import { boundedJsonObject, Timestamp, wellFormed } from './common.js';
import { optionsDocumentation, optionsSchemaFor } from './options.js';

/** Documented maxima (README "Limits"). */
export const LIMITS = {
  parameters: 100,
  batchSize: 100,
  metadataBytes: 16 * 1024,
  nameLength: 200,
  maxTrials: 1_000_000,
  leaseSeconds: 7 * 24 * 3600,
} as const;

export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

// Values are whatever JSON the client sent (the body is parsed JSON); z.unknown() rather than the
// recursive z.json() keeps the OpenAPI document free of self-referencing schemas.
const Metadata = boundedJsonObject(LIMITS.metadataBytes, `must be at most ${LIMITS.metadataBytes} bytes as JSON`)
  .describe(`Free-form JSON object for the client (at most ${LIMITS.metadataBytes / 1024} KiB as JSON).`);

const Name = wellFormed(z.string().trim().min(1).max(LIMITS.nameLength));

const ParameterIn = z.strictObject({
  name: z.string().regex(PARAMETER_NAME, `must match ${PARAMETER_NAME.source}`),
  type: z.enum(['float', 'int']).default('float').describe('`int` values are rounded to the nearest integer when handed out; their bounds must be integers.'),
  scale: z.enum(['linear', 'log']).default('linear').describe('`log`: the search happens in ln(value); bounds must be > 0 and the prior is of ln(value).'),
  bounds: z.tuple([z.number(), z.number()]).nullish().describe('[low, high] in user units, low < high. Points are projected onto them.'),
  prior: z
    .strictObject({ mean: z.number(), std: z.number().positive() })
    .nullish()
    .describe('Normal prior in the parameter\'s scale. Default (no prior anywhere): mean = middle of the transformed bounds, std = transformed width / 4.'),
}).refine((p) => !p.bounds || p.bounds[0] < p.bounds[1], { path: ['bounds'], message: 'bounds must be ordered [low, high] with low < high' });

const JointPrior = z
  .strictObject({
    mean: z.array(z.number()).max(LIMITS.parameters),
    covariance: z.array(z.array(z.number()).max(LIMITS.parameters)).max(LIMITS.parameters).describe('Symmetric positive definite, in the order of `parameters`.'),
  })
  .describe('Joint Gaussian prior over all parameters (alternative to per-parameter priors).');

const OptionsIn = z
  .record(z.string(), z.union([z.number(), z.string(), z.boolean()]))
  .default({})
  .describe(`Method options; defaults are filled in and echoed back. Unknown options are rejected. Per method:\n${optionsDocumentation()}`);

const createExample = {
  name: 'resnet-lr',
  direction: 'minimize',
  parameters: [
    { name: 'log_lr', type: 'float', prior: { mean: -3, std: 1 }, bounds: [-8, 0] },
    { name: 'dropout', type: 'float', prior: { mean: 0.2, std: 0.1 }, bounds: [0, 0.9] },
    { name: 'width', type: 'int', scale: 'log', prior: { mean: 4.85, std: 0.5 }, bounds: [16, 1024] },
  ],
  method: 'prob-cmaes',
  batch_size: 3,
  options: { profile: 'default' },
  seed: 7,
  max_trials: 200,
  metadata: { owner: 'team-a' },
};

export const CreateStudyBody = z
  .strictObject({
    name: Name,
    direction: z.enum(['minimize', 'maximize']).default('minimize'),
    parameters: z.array(ParameterIn).min(1).max(LIMITS.parameters),
    prior: JointPrior.nullish(),
    method: z.enum(METHOD_NAMES).default(DEFAULT_METHOD),
    batch_size: z.int().min(1).max(LIMITS.batchSize).default(3).describe('Points per generation (λ of the evolution strategies); cmaes, xnes and snes need ≥ 2.'),
    options: OptionsIn,
    seed: z.int().min(0).max(MAX_SEED).nullish().describe('RNG seed; random when absent. Echoed back so a study can be replayed.'),
    max_trials: z.int().min(1).max(LIMITS.maxTrials).nullish(),
    lease_seconds: z.int().min(1).max(LIMITS.leaseSeconds).default(600).describe('How long a handed-out trial stays leased to its client.'),
    known_optimum: z.number().nullish().describe('Enables simple regret in /history.'),
    metadata: Metadata.default({}),
  })
  .superRefine((body, ctx) => {
    const res = optionsSchemaFor(body.method as MethodName).safeParse(body.options);
    if (res.success) return;
    for (const issue of res.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: ['options', key], message: `not an option of method ${body.method}` });
      } else {
        ctx.addIssue({ code: 'custom', path: ['options', ...issue.path.map((p) => String(p))], message: issue.message });
      }
    }
  })
  .meta({ examples: [createExample] });

export const PatchStudyBody = z
  .strictObject({
    name: Name.optional(),
    metadata: Metadata.optional().describe('Replaces the whole metadata object.'),
    state: z.enum(STUDY_STATES).optional().describe('ACTIVE ⇄ PAUSED; either → COMPLETED, which is final.'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, metadata, state')
  .meta({ examples: [{ state: 'PAUSED' }] });

const ParameterOut = z.object({
  name: z.string(),
  type: z.enum(['float', 'int']),
  scale: z.enum(['linear', 'log']),
  bounds: z.tuple([z.number(), z.number()]).nullable(),
  prior: z.object({ mean: z.number(), std: z.number() }).describe('Effective marginal prior, in the parameter\'s scale.'),
});

const exampleStudy = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  name: 'resnet-lr',
  direction: 'minimize',
  parameters: [{ name: 'log_lr', type: 'float', scale: 'linear', bounds: [-8, 0], prior: { mean: -3, std: 1 } }],
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
      .object({ mean: z.array(z.number()), covariance: z.array(z.array(z.number())), std: z.array(z.number()) })
      .describe('Effective joint prior, in each parameter\'s scale (ln(value) for log-scaled ones).'),
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
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Study', examples: [exampleStudy] });

export const StudyListSchema = z
  .object({
    studies: z.array(StudySchema),
    next_page_token: z.string().nullable().describe('Pass as page_token for the next page; null on the last page.'),
  })
  .meta({ examples: [{ studies: [exampleStudy], next_page_token: null }] });

export type StudyResource = z.output<typeof StudySchema>;
