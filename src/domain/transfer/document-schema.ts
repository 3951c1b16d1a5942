/**
 * The study document's schema (study-document.ts maps it to and from records). One schema serves
 * both directions, so whatever the server exports is structurally importable. Structure, types,
 * ranges and sizes are checked here (z.number() rejects NaN and ±Infinity, which JSON text such as
 * 1e999 parses to); consistency between parts is study-import.ts's. The document's types are this
 * schema's output.
 */
import { z } from 'zod';
import { METHOD_NAMES } from '../../engine/index.js';
import { STUDY_STATES, TRIAL_STATES } from '../operations/operations.js';
import { boundedJsonObject, cappedRecord, Timestamp, wellFormed } from '../common/schemas.js';
import { addOptionIssues } from '../studies/method-options.js';
import { ChoiceValue, ConditionIn, LIMITS, MAX_SEED, ParameterName, PriorSourceSchema } from '../studies/study-request.js';
import { AllowRepeatsSchema, StoppingRuleSchema } from '../studies/loop-settings.js';
import { MAX_STEP } from '../trials/intermediate-request.js';
import { MAX_CONSTRAINTS, MAX_OBJECTIVES } from '../results/outcomes.js';

export const DOCUMENT_FORMAT = 'probnes-study';
export const DOCUMENT_VERSION = 1;

/**
 * Bounds beyond the create-study limits, for the parts only a document has. The counts match the
 * import body limit (32 MiB): a trial takes at least ~330 bytes of JSON, an engine state more, so
 * no document that fits has more; an array longer than its limit is refused before any element is read.
 */
export const DOCUMENT_LIMITS = {
  trials: 100_000,
  engineStates: 100_000,
  /** One engine state as JSON; ours are a few kB (a GP's inputs at most n·d numbers). */
  engineStateBytes: 8 * 1024 * 1024,
  /** Free text (client ids, failure reasons; the loop accepts reasons up to 2000 characters). */
  textLength: 4096,
  /** Intermediate values (early stopping) of all the trials together. */
  intermediateValues: 1_000_000,
} as const;

const Text = wellFormed(z.string().max(DOCUMENT_LIMITS.textLength));
const Vector = z.array(z.number()).max(LIMITS.parameters);

const NumericParameterEntry = z.strictObject({
  name: ParameterName,
  type: z.enum(['float', 'int']),
  scale: z.enum(['linear', 'log']),
  bounds: z.tuple([z.number(), z.number()]).nullable(),
  step: z.number().positive().nullable().optional().describe('Values are low + k·step (high on the grid); absent or null: 1 for an int, continuous for a float (documents of older servers have none).'),
  prior: z.strictObject({ mean: z.number(), std: z.number().positive() }),
  condition: ConditionIn.optional(),
});

const CategoricalParameterEntry = z.strictObject({
  name: ParameterName,
  type: z.literal('categorical'),
  choices: z.array(ChoiceValue).min(1).max(LIMITS.choices),
  prior: z.strictObject({ probabilities: z.array(z.number().gt(0).max(1)).max(LIMITS.choices) }),
  condition: ConditionIn.optional(),
});

const ParameterEntry = z.discriminatedUnion('type', [NumericParameterEntry, CategoricalParameterEntry]);

const StudyEntry = z
  .strictObject({
    id: z.string().max(128).describe('The id in the exporting server; an import assigns a new one.'),
    name: wellFormed(z.string().trim().min(1).max(LIMITS.nameLength)),
    direction: z.enum(['minimize', 'maximize']),
    parameters: z.array(ParameterEntry).min(1).max(LIMITS.parameters),
    prior: z.strictObject({ mean: Vector, covariance: z.array(Vector).max(LIMITS.parameters), std: Vector, source: PriorSourceSchema.optional() }),
    method: z.enum(METHOD_NAMES),
    batch_size: z.int().min(1).max(LIMITS.batchSize),
    options: cappedRecord(z.string(), z.union([z.number(), z.string(), z.boolean()]), LIMITS.options),
    seed: z.int().min(0).max(MAX_SEED),
    max_trials: z.int().min(1).max(LIMITS.maxTrials).nullable(),
    lease_seconds: z.int().min(1).max(LIMITS.leaseSeconds),
    known_optimum: z.number().nullable(),
    metadata: boundedJsonObject(LIMITS.metadataBytes, `must be at most ${LIMITS.metadataBytes} bytes as JSON`),
    state: z.enum(STUDY_STATES),
    reason: Text.nullable(),
    generation: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
    created_at: Timestamp,
    updated_at: Timestamp,
    allow_repeats: AllowRepeatsSchema.default(false),
    stopping: StoppingRuleSchema.nullable().default(null),
    objectives: z
      .array(z.strictObject({ name: ParameterName, direction: z.enum(['minimize', 'maximize']) }))
      .min(1)
      .max(MAX_OBJECTIVES)
      .optional()
      .describe('Present when the study declares its objectives (docs/multi-objective.md); absent: one objective in `direction`.'),
    constraints: z.array(z.strictObject({ name: ParameterName })).max(MAX_CONSTRAINTS).optional(),
    reference_point: z.array(z.number()).min(2).max(MAX_OBJECTIVES).nullable().optional(),
  })
  // A document an earlier release exported may hold options this one reserves to benchmarks or retired.
  .superRefine((s, ctx) => addOptionIssues(s.method, s.options, ctx, 'stored'));

export const TrialEntry = z.strictObject({
  trial_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  state: z.enum(TRIAL_STATES),
  generation: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  client_id: Text.nullable(),
  lease_expires_at: Timestamp.nullable(),
  parameters: cappedRecord(z.string().max(64), ChoiceValue, LIMITS.parameters),
  point: Vector.nullable().describe('Internal (whitened) coordinates of the point, as the engine saw it.'),
  value: z.number().nullable(),
  stderr: z.number().min(0).nullable(),
  values: z.array(z.number()).min(1).max(MAX_OBJECTIVES).optional().describe('A study of several objectives: the objectives\' values (`value` is null).'),
  constraints: z.array(z.number()).max(MAX_CONSTRAINTS).optional(),
  infeasible: z.literal(true).optional().describe('Reported infeasible: COMPLETED without a value.'),
  failure_reason: Text.nullable(),
  late: z.boolean().default(false).describe('The result came after the service had given the trial up (see the Trial resource); absent in documents of older servers.'),
  source: z.enum(['suggested', 'external']),
  created_at: Timestamp,
  completed_at: Timestamp.nullable(),
  updated_at: Timestamp,
});

export const EngineStateEntry = z.strictObject({
  generation: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  revision: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  version: z.int().min(1).max(1_000_000),
  state: boundedJsonObject(DOCUMENT_LIMITS.engineStateBytes, `must be at most ${DOCUMENT_LIMITS.engineStateBytes / 1024 / 1024} MiB as JSON`)
    .describe('The engine\'s state (search distribution, model, RNG state) as stored; opaque to clients.'),
  created_at: Timestamp,
});

export const IntermediateEntry = z.strictObject({
  trial_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  step: z.int().min(0).max(MAX_STEP),
  value: z.number(),
  created_at: Timestamp,
});

export const DocumentSchema = z
  .strictObject({
    format: z.literal(DOCUMENT_FORMAT),
    version: z.literal(DOCUMENT_VERSION).describe('Format version; this server reads version 1.'),
    exported_at: Timestamp,
    study: StudyEntry.describe('The specification (effective prior and options), state and generation.'),
    trials: z.array(TrialEntry).max(DOCUMENT_LIMITS.trials).describe('Every trial, by ascending trial id.'),
    engine_states: z.array(EngineStateEntry).max(DOCUMENT_LIMITS.engineStates).describe('One engine-state snapshot per generation, by generation.'),
    intermediate_values: z
      .array(IntermediateEntry)
      .max(DOCUMENT_LIMITS.intermediateValues)
      .default([])
      .describe('What running trials reported at each step (early stopping), by trial id then step; absent in documents of older servers.'),
  });

export type StudyDocument = z.output<typeof DocumentSchema>;
export type DocumentStudy = StudyDocument['study'];
export type DocumentTrial = StudyDocument['trials'][number];
export type DocumentEngineState = StudyDocument['engine_states'][number];
