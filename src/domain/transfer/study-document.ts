/**
 * The study document: a whole study (specification, state, trials, engine-state snapshots) as one
 * JSON value, for `GET /export` and `POST /import`. It carries the internal points and the engine
 * states (RNG state included), so an imported copy hands out exactly the suggestions the original
 * would have. Field names are snake_case like the rest of the API: the document is a file format.
 * Both directions of the mapping live here: records → document (export), document → records (import).
 */
import type { EngineStateRecord, ImportedEngineState, ImportedStudy, ImportedTrial, JsonObject, JsonValue, StudyState, TrialRecord, TrialState } from '../../storage/index.js';
import { resolveOptions, type MethodName } from '../../engine/index.js';
import type { EffectivePrior, ParameterSpec } from '../studies/study-spec.js';
import type { Study } from '../studies/studies.js';

export const DOCUMENT_FORMAT = 'probnes-study';
export const DOCUMENT_VERSION = 1;

export interface DocumentStudy {
  /** The id in the exporting server; ignored on import (the copy gets a new one). */
  id: string;
  name: string;
  direction: 'minimize' | 'maximize';
  parameters: ParameterSpec[];
  prior: EffectivePrior;
  method: MethodName;
  batch_size: number;
  options: Record<string, number | string | boolean>;
  seed: number;
  max_trials: number | null;
  lease_seconds: number;
  known_optimum: number | null;
  metadata: Record<string, unknown>;
  state: StudyState;
  reason: string | null;
  generation: number;
  created_at: string;
  updated_at: string;
}

export interface DocumentTrial {
  trial_id: number;
  state: TrialState;
  generation: number;
  client_id: string | null;
  lease_expires_at: string | null;
  parameters: Record<string, number>;
  /** Internal (whitened) coordinates as the engine saw the point. */
  point: number[] | null;
  value: number | null;
  stderr: number | null;
  failure_reason: string | null;
  /** The result came after the service had given the trial up (absent in documents of older servers: false). */
  late: boolean;
  source: 'suggested' | 'external';
  created_at: string;
  completed_at: string | null;
  updated_at: string;
}

export interface DocumentEngineState {
  generation: number;
  revision: number;
  version: number;
  state: Record<string, unknown>;
  created_at: string;
}

export interface StudyDocument {
  format: typeof DOCUMENT_FORMAT;
  version: typeof DOCUMENT_VERSION;
  exported_at: string;
  study: DocumentStudy;
  trials: DocumentTrial[];
  engine_states: DocumentEngineState[];
}

export function toDocument(study: Study, trials: TrialRecord[], states: EngineStateRecord[], exportedAt: string): StudyDocument {
  return {
    format: DOCUMENT_FORMAT,
    version: DOCUMENT_VERSION,
    exported_at: exportedAt,
    study: {
      id: study.id,
      name: study.name,
      direction: study.direction,
      parameters: study.parameters,
      prior: study.prior,
      method: study.method,
      batch_size: study.batchSize,
      options: study.options as DocumentStudy['options'],
      seed: study.seed,
      max_trials: study.maxTrials,
      lease_seconds: study.leaseSeconds,
      known_optimum: study.knownOptimum,
      metadata: study.metadata,
      state: study.state,
      reason: study.reason,
      generation: study.generation,
      created_at: study.createdAt,
      updated_at: study.updatedAt,
    },
    trials: trials.map((t) => ({
      trial_id: t.trialId,
      state: t.state,
      generation: t.generation,
      client_id: t.clientId,
      lease_expires_at: t.leaseExpiresAt,
      parameters: t.parameters,
      point: t.point,
      value: t.value,
      stderr: t.stderr,
      failure_reason: t.failureReason,
      late: t.late,
      source: t.source,
      created_at: t.createdAt,
      completed_at: t.completedAt,
      updated_at: t.updatedAt,
    })),
    engine_states: states.map((e) => ({ generation: e.generation, revision: e.revision, version: e.version, state: e.state as JsonObject, created_at: e.createdAt })),
  };
}

/** Stored JSON as the storage types it (the document's values were checked to be plain JSON). */
const asJson = (v: unknown): JsonValue => v as JsonValue;

/** A checked document → the records of its copy: a new id and tenant, created and updated `now`, trials and states as they were. */
export function fromDocument(doc: StudyDocument, copy: { id: string; tenantId: string; now: string }): { study: ImportedStudy; trials: ImportedTrial[]; engineStates: ImportedEngineState[] } {
  const s = doc.study;
  return {
    study: {
      id: copy.id,
      tenantId: copy.tenantId,
      name: s.name,
      direction: s.direction,
      parameters: asJson(s.parameters),
      prior: asJson(s.prior),
      method: s.method,
      batchSize: s.batch_size,
      // Exported options are already effective; resolving again only fills what a hand-written
      // document left out, with the same defaults the original got.
      options: resolveOptions(s.method, s.parameters.length, s.options),
      seed: s.seed,
      maxTrials: s.max_trials,
      leaseSeconds: s.lease_seconds,
      knownOptimum: s.known_optimum,
      metadata: s.metadata as JsonObject,
      state: s.state,
      reason: s.reason,
      generation: s.generation,
      createdAt: copy.now,
      updatedAt: copy.now,
    },
    trials: doc.trials.map((t) => ({
      trialId: t.trial_id,
      state: t.state,
      generation: t.generation,
      clientId: t.client_id,
      leaseExpiresAt: t.lease_expires_at,
      parameters: t.parameters,
      point: t.point,
      value: t.value,
      stderr: t.stderr,
      failureReason: t.failure_reason,
      late: t.late,
      source: t.source,
      createdAt: t.created_at,
      completedAt: t.completed_at,
      updatedAt: t.updated_at,
    })),
    engineStates: doc.engine_states.map((e) => ({ generation: e.generation, revision: e.revision, version: e.version, state: asJson(e.state), createdAt: e.created_at })),
  };
}
