/** Rows as node-postgres returns them (json columns already parsed, int8 as numbers) to storage records. */
import { TRIAL_STATES, type ApiKeyRecord, type EngineStateRecord, type JsonObject, type JsonValue, type StudyRecord, type TrialCounts, type TrialRecord, type TrialState } from '../storage.js';

export interface StudyRow {
  seq: number;
  id: string;
  tenant_id: string;
  name: string;
  direction: 'minimize' | 'maximize';
  parameters: JsonValue;
  prior: JsonValue;
  method: string;
  batch_size: number;
  options: JsonObject;
  seed: number;
  max_trials: number | null;
  lease_seconds: number;
  known_optimum: number | null;
  metadata: JsonObject;
  state: StudyRecord['state'];
  reason: string | null;
  generation: number;
  next_trial_id: number;
  commit_seq: number;
  created_at: string;
  updated_at: string;
  /** From the query: { state: n } of study_trial_counts, or null when the study has no trials. */
  counts: Partial<Record<TrialState, number>> | null;
}

/** The counts subquery every study read appends (kept by triggers, a few rows per study). */
export const COUNTS_SQL = '(SELECT json_object_agg(c.state, c.n) FROM study_trial_counts c WHERE c.study_id = s.id) AS counts';

export function toStudy(r: StudyRow): StudyRecord {
  const trialCounts = Object.fromEntries(TRIAL_STATES.map((st) => [st, r.counts?.[st] ?? 0])) as TrialCounts;
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    direction: r.direction,
    parameters: r.parameters,
    prior: r.prior,
    method: r.method,
    batchSize: r.batch_size,
    options: r.options,
    seed: r.seed,
    maxTrials: r.max_trials,
    leaseSeconds: r.lease_seconds,
    knownOptimum: r.known_optimum,
    metadata: r.metadata,
    state: r.state,
    reason: r.reason,
    generation: r.generation,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    trialCounts,
  };
}

export interface TrialRow {
  study_id: string;
  trial_id: number;
  state: TrialState;
  generation: number;
  client_id: string | null;
  lease_expires_at: string | null;
  parameters: Record<string, number>;
  point: number[] | null;
  value: number | null;
  stderr: number | null;
  failure_reason: string | null;
  late: boolean;
  source: 'suggested' | 'external';
  created_at: string;
  completed_at: string | null;
  updated_at: string;
}

export function toTrial(r: TrialRow): TrialRecord {
  return {
    studyId: r.study_id,
    trialId: r.trial_id,
    state: r.state,
    generation: r.generation,
    clientId: r.client_id,
    leaseExpiresAt: r.lease_expires_at,
    parameters: r.parameters,
    point: r.point,
    value: r.value,
    stderr: r.stderr,
    failureReason: r.failure_reason,
    late: r.late,
    source: r.source,
    createdAt: r.created_at,
    completedAt: r.completed_at,
    updatedAt: r.updated_at,
  };
}

export interface EngineStateRow {
  study_id: string;
  generation: number;
  revision: number;
  version: number;
  state: JsonValue;
  created_at: string;
}

export function toEngineState(r: EngineStateRow): EngineStateRecord {
  return { studyId: r.study_id, generation: r.generation, revision: r.revision, version: r.version, state: r.state, createdAt: r.created_at };
}

export interface KeyRow {
  id: string;
  tenant_id: string;
  key_hash: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

export function toKey(r: KeyRow): ApiKeyRecord {
  return { id: r.id, tenantId: r.tenant_id, keyHash: r.key_hash, label: r.label, createdAt: r.created_at, revokedAt: r.revoked_at };
}

/** JSON text for a json parameter (node-postgres would send a JS array as a PostgreSQL array, not JSON). */
export const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));
