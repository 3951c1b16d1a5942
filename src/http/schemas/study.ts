/**
 * Study request and response schemas. Structure, types and ranges are checked here; the rules that
 * span fields (bounds against priors, the joint covariance, batch size against the method) are the
 * domain's (src/domain/studies/study-spec.ts), so any transport gets them.
 */
import { z } from 'zod';
import { DEFAULT_METHOD, METHOD_NAMES } from '../../engine/index.js';
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
  priorPoints: 10_000,
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

const FromStudy = z
  .strictObject({
    study_id: z.string().min(1).max(128).describe('An earlier study of the same tenant (another tenant\'s id is a 404).'),
    top_fraction: z.number().gt(0).max(1).default(0.1).describe('γ: the prior is fitted to the best ⌈γ·N⌉ (at least 2) of its N completed trials.'),
    alpha: z.number().gt(0).max(1).default(0.1).describe('α: the WS-CMA-ES spread added to each top trial, in units of the bounds\' (transformed) width.'),
    include_observations: z.boolean().default(false).describe('Also copy the source\'s completed trials (those inside these bounds) into the new study as external observations.'),
  })
  .describe('Warm start from an earlier study (WS-CMA-ES, Nomura et al., AAAI 2021): parameters must match by name and scale, and the direction must be the same.');

const JointPrior = z
  .strictObject({
    mean: z.array(z.number()).max(LIMITS.parameters).optional(),
    covariance: z.array(z.array(z.number()).max(LIMITS.parameters)).max(LIMITS.parameters).optional().describe('Symmetric positive definite, in the order of `parameters`.'),
    from_points: z
      .array(z.record(z.string(), z.number()))
      .max(LIMITS.priorPoints)
      .optional()
      .describe('Points believed plausible, in user units keyed by parameter name (at least 2): the prior is their weighted mean and shrunk covariance (Oracle Approximating Shrinkage toward an isotropic target in units of the bounds\' widths) in the search scale (ln for log parameters).'),
    weights: z.array(z.number()).max(LIMITS.priorPoints).optional().describe('Positive weights of `from_points`, one per point (default: equal).'),
    from_study: FromStudy.optional(),
  })
  .superRefine((p, ctx) => {
    const forms = [p.mean !== undefined || p.covariance !== undefined, p.from_points !== undefined, p.from_study !== undefined].filter(Boolean).length;
    if (forms !== 1) ctx.addIssue({ code: 'custom', message: 'give exactly one of {mean, covariance}, {from_points[, weights]} or {from_study}' });
    else if ((p.mean === undefined) !== (p.covariance === undefined)) ctx.addIssue({ code: 'custom', path: [p.mean === undefined ? 'mean' : 'covariance'], message: 'a joint prior needs both mean and covariance' });
    if (p.weights !== undefined && p.from_points === undefined) ctx.addIssue({ code: 'custom', path: ['weights'], message: 'weights go with from_points' });
  })
  .describe('Joint Gaussian prior over all parameters (alternative to per-parameter priors), typed in ({mean, covariance}) or fitted to data ({from_points} or {from_study}).');

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

export const CreateStudyBody = z
  .strictObject({
    name: Name,
    direction: z.enum(['minimize', 'maximize']).default('minimize'),
    parameters: z.array(ParameterIn).min(1).max(LIMITS.parameters),
    prior: JointPrior.nullish(),
    method: z.enum(METHOD_NAMES).default(DEFAULT_METHOD),
    batch_size: z.int().min(1).max(LIMITS.batchSize).default(3).describe('Points per generation (λ of the evolution strategies); cmaes, lq-cmaes, xnes and snes need ≥ 2.'),
    options: OptionsIn,
    seed: z.int().min(0).max(MAX_SEED).nullish().describe('RNG seed; random when absent. Echoed back so a study can be replayed.'),
    max_trials: z.int().min(1).max(LIMITS.maxTrials).nullish(),
    lease_seconds: z.int().min(1).max(LIMITS.leaseSeconds).default(600).describe('How long a handed-out trial stays leased to its client.'),
    known_optimum: z.number().nullish().describe('Enables simple regret in /history.'),
    metadata: Metadata.default({}),
  })
  .superRefine((body, ctx) => {
    const res = optionsSchemaFor(body.method).safeParse(body.options);
    if (res.success) return;
    for (const issue of res.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: ['options', key], message: `not an option of method ${body.method}` });
      } else {
        ctx.addIssue({ code: 'custom', path: ['options', ...issue.path.map((p) => String(p))], message: issue.message });
      }
    }
  })
  .meta({ examples: [createExample, fromPointsExample, fromStudyExample] });

export const PatchStudyBody = z
  .strictObject({
    name: Name.optional(),
    metadata: Metadata.optional().describe('Replaces the whole metadata object.'),
    state: z.enum(STUDY_STATES).optional().describe('ACTIVE ⇄ PAUSED; either → COMPLETED, which is final.'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, metadata, state')
  .meta({ examples: [{ state: 'PAUSED' }] });

/** Where a fitted prior came from (absent for typed-in priors). */
export const PriorSourceSchema = z
  .union([
    z.strictObject({ from: z.literal('points'), points: z.int(), shrinkage: z.number().describe('Shrinkage intensity ρ ∈ [0, 1] (OAS).') }),
    z.strictObject({
      from: z.literal('study'),
      study_id: z.string().max(128),
      top_fraction: z.number(),
      alpha: z.number(),
      points: z.int().describe('How many top trials the prior was fitted to.'),
      include_observations: z.boolean(),
      observations_copied: z.int(),
    }),
  ])
  .describe('What the prior was fitted to.');

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
      .object({ mean: z.array(z.number()), covariance: z.array(z.array(z.number())), std: z.array(z.number()), source: PriorSourceSchema.optional() })
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
