/**
 * The create and update requests of a study: their structure, types and ranges. The rules that span
 * fields (bounds against priors, the joint covariance, batch size against the method) are
 * study-spec.ts's, so any transport gets them. The types the study service accepts are these
 * schemas' output.
 */
import { z } from 'zod';
import { DEFAULT_METHOD, METHOD_NAMES } from '../../engine/index.js';
import { STUDY_STATES } from '../operations/operations.js';
import { boundedJsonObject, boundedRecord, wellFormed } from '../common/schemas.js';
import { addOptionIssues, optionsDocumentation } from './method-options.js';
import { AllowRepeatsSchema, StoppingRuleSchema } from './loop-settings.js';
import { MAX_CONSTRAINTS, MAX_OBJECTIVES } from '../results/outcomes.js';

/** Seeds are non-negative 31-bit integers, a range every RNG seeding routine accepts as is. */
export const MAX_SEED = 2 ** 31 - 1;

/** Documented maxima (docs/limits.md). */
export const LIMITS = {
  parameters: 100,
  batchSize: 100,
  metadataBytes: 16 * 1024,
  nameLength: 200,
  maxTrials: 1_000_000,
  leaseSeconds: 7 * 24 * 3600,
  priorPoints: 10_000,
  /** Choices of one categorical parameter. */
  choices: 100,
  /** Characters of a string choice. */
  choiceLength: 200,
  /** Keys of a method's options (no method has more than a dozen). */
  options: 64,
} as const;

export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * Names a parameter may not have although PARAMETER_NAME matches them: the properties every plain
 * JavaScript object already has (Object.prototype's, and `prototype`). A point is a JSON object
 * keyed by parameter name, on the server and in every client; `__proto__` cannot be a key of one
 * at all (an assignment sets the prototype, and the JSON body parser refuses the key), so such a
 * parameter silently lost its values, and the others read as present (an inherited function) in
 * any object that lacks them. They are refused at creation and import (docs/security.md).
 */
export const RESERVED_PARAMETER_NAMES: ReadonlySet<string> = new Set([
  '__proto__',
  'prototype',
  'constructor',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

/** A parameter's name at creation and import: PARAMETER_NAME, and not a reserved name. */
export const ParameterName = z
  .string()
  .regex(PARAMETER_NAME, `must match ${PARAMETER_NAME.source}`)
  .refine((n) => !RESERVED_PARAMETER_NAMES.has(n), {
    error: (issue) => `${JSON.stringify(issue.input)} is reserved (a property every JavaScript object has): choose another name`,
  });

// Values are whatever JSON the client sent (the body is parsed JSON); z.unknown() rather than the
// recursive z.json() keeps the OpenAPI document free of self-referencing schemas.
const Metadata = boundedJsonObject(LIMITS.metadataBytes, `must be at most ${LIMITS.metadataBytes} bytes as JSON`)
  .describe(`Free-form JSON object for the client (at most ${LIMITS.metadataBytes / 1024} KiB as JSON).`);

const Name = wellFormed(z.string().trim().min(1).max(LIMITS.nameLength));

/** One value a categorical parameter may take: handed out and matched exactly as given. */
export const ChoiceValue = z.union([wellFormed(z.string().max(LIMITS.choiceLength)), z.number(), z.boolean()]);

/**
 * When a parameter applies (docs/conditional.md): only while `parent`, a categorical parameter, is
 * itself active and takes one of `values`. The checks that need the other parameters (the parent
 * exists and is categorical, the values are its choices, no cycle) are study-spec.ts's.
 */
export const ConditionIn = z
  .strictObject({
    parent: z.string().min(1).max(64).describe('The name of another parameter of the study, a categorical one.'),
    values: z.array(ChoiceValue).min(1).max(LIMITS.choices).describe('Choices of the parent (distinct, matched by value and JSON type) under which this parameter is active.'),
  })
  .describe('Makes the parameter conditional: it is active, suggested and reported only while `parent` is active and takes one of `values`. Conditions nest to any depth (a parent may itself be conditional); no cycles.');

const NumericParameterIn = z.strictObject({
  name: ParameterName,
  type: z.enum(['float', 'int']).default('float').describe('`int` values are rounded to the nearest integer when handed out (to the nearest grid value with a `step`); their bounds must be integers. `categorical`: see the other form.'),
  scale: z.enum(['linear', 'log']).default('linear').describe('`log`: the search happens in ln(value); bounds must be > 0 and the prior is of ln(value).'),
  bounds: z.tuple([z.number(), z.number()]).nullish().describe('[low, high] in user units, low < high. Points are projected onto them.'),
  step: z
    .number()
    .gt(0, 'must be > 0: the distance between two values of the grid')
    .nullish()
    .describe('Optuna\'s `step`: the parameter takes only the values low + k·step (k = 0, 1, …) within the bounds, printed without float noise (0.1-steps give 0.3). Needs bounds; not with `scale: "log"` (except 1 for an int); at most high − low, and at least 1e-8 × max(|low|, |high|). An int\'s step is an integer, 1 by default. A high off the grid becomes the last grid value below it (echoed in `bounds`). Absent for a float: continuous.'),
  prior: z
    .strictObject({ mean: z.number(), std: z.number().positive() })
    .nullish()
    .describe('Normal prior in the parameter\'s scale. Default (no prior anywhere): mean = middle of the transformed bounds, std = transformed width / 4.'),
  condition: ConditionIn.nullish(),
}).refine((p) => !p.bounds || p.bounds[0] < p.bounds[1], { path: ['bounds'], message: 'bounds must be ordered [low, high] with low < high' });

/** A parameter's value in user units as the API returns it: a number, or a categorical parameter's choice. */
export const ParameterValueSchema = z.union([z.number(), z.string(), z.boolean()]);


const CategoricalParameterIn = z.strictObject({
  name: ParameterName,
  type: z.literal('categorical'),
  choices: z
    .array(ChoiceValue)
    .min(1)
    .max(LIMITS.choices)
    .describe(`The values the parameter may take (1 to ${LIMITS.choices}, distinct; strings of at most ${LIMITS.choiceLength} characters, numbers or booleans), handed out exactly as given. They are unordered: the methods treat two different choices as equally far apart.`),
  prior: z
    .strictObject({
      probabilities: z.array(z.number().gt(0).max(1)).max(LIMITS.choices).describe('One positive probability per choice, in the order of `choices`, summing to 1 (to 1e-6).'),
    })
    .nullish()
    .describe('Prior over the choices (default: uniform).'),
  condition: ConditionIn.nullish(),
});

/**
 * One parameter: numeric (`float`, the default, or `int`) or `categorical`. The type picks the form,
 * so a problem is reported at the field of the form the client meant.
 */
const ParameterIn = z.discriminatedUnion('type', [NumericParameterIn, CategoricalParameterIn]);

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
      .array(boundedRecord(z.string(), z.number(), LIMITS.parameters))
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

const OptionsIn = boundedRecord(z.string(), z.union([z.number(), z.string(), z.boolean()]), LIMITS.options)
  .default({})
  .describe(`Method options; defaults are filled in and echoed back. Unknown options are rejected. Per method:\n${optionsDocumentation()}`);

const ObjectiveIn = z.strictObject({
  name: ParameterName.describe('Unique among the objectives; the pattern of a parameter name.'),
  direction: z.enum(['minimize', 'maximize']),
});

const ConstraintIn = z.strictObject({ name: ParameterName.describe('Unique among the constraints.') });

export const CreateStudyRequest = z
  .strictObject({
    name: Name,
    direction: z.enum(['minimize', 'maximize']).optional().describe('The one objective\'s direction (default minimize). A study of several objectives gives `objectives` instead.'),
    objectives: z
      .array(ObjectiveIn)
      .min(1)
      .max(MAX_OBJECTIVES)
      .optional()
      .describe(`1–${MAX_OBJECTIVES} objectives, each minimised or maximised (docs/multi-objective.md); observations then report \`values\`, one per objective in this order. Not with \`direction\`.`),
    constraints: z
      .array(ConstraintIn)
      .max(MAX_CONSTRAINTS)
      .optional()
      .describe(`0–${MAX_CONSTRAINTS} constraints: observations report one value per constraint, in this order; a point is feasible when every value is ≤ 0. /best and the front count feasible points only.`),
    reference_point: z
      .array(z.number())
      .min(2)
      .max(MAX_OBJECTIVES)
      .optional()
      .describe('Several objectives: the hypervolume\'s reference point, one value per objective in its own units; derived from the front when absent.'),
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
    allow_repeats: AllowRepeatsSchema.default(false),
    stopping: StoppingRuleSchema.nullish(),
  })
  .superRefine((body, ctx) => {
    addOptionIssues(body.method, body.options, ctx);
    addOutcomeIssues(body, ctx);
  });

/** The objectives, constraints and reference point, checked together (the methods that can take them: the study service). */
function addOutcomeIssues(body: { direction?: string; objectives?: { name: string }[]; constraints?: { name: string }[]; reference_point?: number[] }, ctx: z.RefinementCtx): void {
  if (body.objectives && body.direction !== undefined) ctx.addIssue({ code: 'custom', path: ['direction'], message: 'give `direction` or `objectives`, not both (each objective has its direction)' });
  for (const [key, list] of [['objectives', body.objectives], ['constraints', body.constraints]] as const) {
    const seen = new Set<string>();
    list?.forEach((o, i) => {
      if (seen.has(o.name)) ctx.addIssue({ code: 'custom', path: [key, i, 'name'], message: `${JSON.stringify(o.name)} is named twice` });
      seen.add(o.name);
    });
  }
  if (body.reference_point) {
    const m = body.objectives?.length ?? 1;
    if (m < 2) ctx.addIssue({ code: 'custom', path: ['reference_point'], message: 'a reference point is for several objectives' });
    else if (body.reference_point.length !== m) ctx.addIssue({ code: 'custom', path: ['reference_point'], message: `needs one value per objective: ${m}, got ${body.reference_point.length}` });
  }
}

export const PatchStudyRequest = z
  .strictObject({
    name: Name.optional(),
    metadata: Metadata.optional().describe('Replaces the whole metadata object.'),
    state: z.enum(STUDY_STATES).optional().describe('ACTIVE ⇄ PAUSED; either → COMPLETED, which is final.'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, metadata, state');

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

/** The create request as a transport hands it over, defaults filled in: the prior in any of its three forms. */
export type CreateStudyInput = z.output<typeof CreateStudyRequest>;
/** What a client may send for one parameter. */
export type ParameterInput = CreateStudyInput['parameters'][number];
export type NumericParameterInput = Extract<ParameterInput, { type: 'float' | 'int' }>;
export type CategoricalParameterInput = Extract<ParameterInput, { type: 'categorical' }>;
/** A value of a categorical parameter. */
export type Choice = z.output<typeof ChoiceValue>;
/** A parameter's value in user units: a number, or one of a categorical parameter's choices. */
export type ParamValue = number | string | boolean;
/** The request's `prior`: typed in ({mean, covariance}) or fitted to data ({from_points} or {from_study}), exactly one of them. */
export type PriorInput = NonNullable<CreateStudyInput['prior']>;
export type StudyPatchInput = z.output<typeof PatchStudyRequest>;
/** Where a fitted prior came from; stored inside the effective prior. */
export type PriorSource = z.output<typeof PriorSourceSchema>;
