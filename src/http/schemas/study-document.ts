/**
 * The study document of `GET /export` and `POST /import` (src/domain/transfer/study-document.ts). One schema
 * serves both directions, so whatever the server exports is structurally importable. Structure,
 * types, ranges and sizes are checked here (z.number() rejects NaN and ±Infinity, which JSON text
 * such as 1e999 parses to); consistency between parts is the domain's (study-import.ts).
 */
import { z } from 'zod';
import { METHOD_NAMES } from '../../engine/index.js';
import { DOCUMENT_FORMAT, DOCUMENT_VERSION, MAX_SEED, type StudyDocument } from '../../domain/index.js';
import { STUDY_STATES, TRIAL_STATES } from '../../domain/index.js';
import { boundedJsonObject, Timestamp, wellFormed, type SameShape } from './common.js';
import { optionsSchemaFor } from './options.js';
import { LIMITS, PARAMETER_NAME, PriorSourceSchema } from './study.js';

/** Bounds beyond the create-study limits, for the parts only a document has. */
export const DOCUMENT_LIMITS = {
  trials: 1_000_000,
  engineStates: 1_000_000,
  /** One engine state as JSON; ours are a few kB (a GP's inputs at most n·d numbers). */
  engineStateBytes: 8 * 1024 * 1024,
  /** Free text (client ids, failure reasons; the loop accepts reasons up to 2000 characters). */
  textLength: 4096,
} as const;

const Text = wellFormed(z.string().max(DOCUMENT_LIMITS.textLength));
const Vector = z.array(z.number()).max(LIMITS.parameters);

const DocumentParameter = z.strictObject({
  name: z.string().regex(PARAMETER_NAME, `must match ${PARAMETER_NAME.source}`),
  type: z.enum(['float', 'int']),
  scale: z.enum(['linear', 'log']),
  bounds: z.tuple([z.number(), z.number()]).nullable(),
  prior: z.strictObject({ mean: z.number(), std: z.number().positive() }),
});

const DocumentStudy = z
  .strictObject({
    id: z.string().max(128).describe('The id in the exporting server; an import assigns a new one.'),
    name: wellFormed(z.string().trim().min(1).max(LIMITS.nameLength)),
    direction: z.enum(['minimize', 'maximize']),
    parameters: z.array(DocumentParameter).min(1).max(LIMITS.parameters),
    prior: z.strictObject({ mean: Vector, covariance: z.array(Vector).max(LIMITS.parameters), std: Vector, source: PriorSourceSchema.optional() }),
    method: z.enum(METHOD_NAMES),
    batch_size: z.int().min(1).max(LIMITS.batchSize),
    options: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
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
  })
  .superRefine((s, ctx) => {
    const res = optionsSchemaFor(s.method).safeParse(s.options);
    if (res.success) return;
    for (const issue of res.error.issues) {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [k]) : [issue.path.map(String)];
      for (const k of keys) ctx.addIssue({ code: 'custom', path: ['options', ...k], message: issue.code === 'unrecognized_keys' ? `not an option of method ${s.method}` : issue.message });
    }
  });

const DocumentTrial = z.strictObject({
  trial_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  state: z.enum(TRIAL_STATES),
  generation: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  client_id: Text.nullable(),
  lease_expires_at: Timestamp.nullable(),
  parameters: z.record(z.string().max(64), z.number()),
  point: Vector.nullable().describe('Internal (whitened) coordinates of the point, as the engine saw it.'),
  value: z.number().nullable(),
  stderr: z.number().min(0).nullable(),
  failure_reason: Text.nullable(),
  late: z.boolean().default(false).describe('The result came after the service had given the trial up (see the Trial resource); absent in documents of older servers.'),
  source: z.enum(['suggested', 'external']),
  created_at: Timestamp,
  completed_at: Timestamp.nullable(),
  updated_at: Timestamp,
});

const DocumentEngineState = z.strictObject({
  generation: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  revision: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  version: z.int().min(1).max(1_000_000),
  state: boundedJsonObject(DOCUMENT_LIMITS.engineStateBytes, `must be at most ${DOCUMENT_LIMITS.engineStateBytes / 1024 / 1024} MiB as JSON`)
    .describe('The engine\'s state (search distribution, model, RNG state) as stored; opaque to clients.'),
  created_at: Timestamp,
});

const example = {
  format: DOCUMENT_FORMAT,
  version: DOCUMENT_VERSION,
  exported_at: '2025-01-02T08:00:00.000Z',
  study: {
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    name: 'resnet-lr',
    direction: 'minimize',
    parameters: [{ name: 'log_lr', type: 'float', scale: 'linear', bounds: [-8, 0], prior: { mean: -3, std: 1 } }],
    prior: { mean: [-3], covariance: [[1]], std: [1] },
    method: 'random',
    batch_size: 1,
    options: {},
    seed: 7,
    max_trials: null,
    lease_seconds: 600,
    known_optimum: null,
    metadata: {},
    state: 'ACTIVE',
    reason: null,
    generation: 1,
    created_at: '2025-01-01T12:00:00.000Z',
    updated_at: '2025-01-01T12:05:00.000Z',
  },
  trials: [
    {
      trial_id: 1,
      state: 'COMPLETED',
      generation: 0,
      client_id: 'worker-1',
      lease_expires_at: null,
      parameters: { log_lr: -2.5 },
      point: [0.5],
      value: 0.73,
      stderr: null,
      failure_reason: null,
      late: false,
      source: 'suggested',
      created_at: '2025-01-01T12:00:01.000Z',
      completed_at: '2025-01-01T12:04:00.000Z',
      updated_at: '2025-01-01T12:04:00.000Z',
    },
  ],
  engine_states: [{ generation: 1, revision: 3, version: 1, state: { method: 'random', dim: 1, mean: [0], cov: [[1]], '…': '…' }, created_at: '2025-01-01T12:04:00.000Z' }],
};

export const StudyDocumentSchema = z
  .strictObject({
    format: z.literal(DOCUMENT_FORMAT),
    version: z.literal(DOCUMENT_VERSION).describe('Format version; this server reads version 1.'),
    exported_at: Timestamp,
    study: DocumentStudy.describe('The specification (effective prior and options), state and generation.'),
    trials: z.array(DocumentTrial).max(DOCUMENT_LIMITS.trials).describe('Every trial, by ascending trial id.'),
    engine_states: z.array(DocumentEngineState).max(DOCUMENT_LIMITS.engineStates).describe('One engine-state snapshot per generation, by generation.'),
  })
  .meta({ id: 'StudyDocument', examples: [example] });

/** The domain's StudyDocument is exactly this schema's output (see SameShape). */
const _documentShape: SameShape<z.output<typeof StudyDocumentSchema>, StudyDocument> = true;
