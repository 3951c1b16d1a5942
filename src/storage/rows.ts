/**
 * Table rows to storage records, for both backends. The tables have the same columns in SQLite and
 * PostgreSQL; what differs is how the driver hands back a JSON column (better-sqlite3: the text;
 * node-postgres: already parsed) and a boolean (SQLite has none: 0 or 1). A backend passes those
 * two readings as its `Columns`; everything else is mapped here once (trials: trial-columns.ts).
 */
import { TRIAL_STATES, type ApiKeyRecord, type EngineStateRecord, type IntermediateRecord, type JsonObject, type JsonValue, type StudyRecord, type TrialCounts, type TrialState } from './storage.js';

/** How one driver returns a JSON column (stored as J) and a boolean (stored as B). */
export interface Columns<J, B> {
  json(v: J): JsonValue;
  bool(v: B): boolean;
}

export interface StudyRow<J> {
  seq: number;
  id: string;
  tenant_id: string;
  name: string;
  direction: 'minimize' | 'maximize';
  parameters: J;
  prior: J;
  method: string;
  batch_size: number;
  options: J;
  seed: number;
  max_trials: number | null;
  lease_seconds: number;
  known_optimum: number | null;
  metadata: J;
  state: StudyRecord['state'];
  reason: string | null;
  generation: number;
  created_at: string;
  updated_at: string;
  /** Added by migration 007 (SQLite) / 006 (PostgreSQL). */
  loop_settings?: J | null;
  /** Added by migration 010 (both databases). */
  outcomes?: J | null;
}

/** `counts`: trials by state as the study_trial_counts table keeps them (a state without trials may be absent). */
export function studyFromRow<J>(r: StudyRow<J>, counts: Partial<Record<TrialState, number>> | null, c: Columns<J, unknown>): StudyRecord {
  const trialCounts = Object.fromEntries(TRIAL_STATES.map((st) => [st, counts?.[st] ?? 0])) as TrialCounts;
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    direction: r.direction,
    parameters: c.json(r.parameters),
    prior: c.json(r.prior),
    method: r.method,
    batchSize: r.batch_size,
    options: c.json(r.options) as JsonObject,
    seed: r.seed,
    maxTrials: r.max_trials,
    leaseSeconds: r.lease_seconds,
    knownOptimum: r.known_optimum,
    metadata: c.json(r.metadata) as JsonObject,
    state: r.state,
    reason: r.reason,
    generation: r.generation,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    trialCounts,
    loopSettings: r.loop_settings === undefined || r.loop_settings === null ? {} : (c.json(r.loop_settings) as JsonObject),
    outcomes: r.outcomes === undefined || r.outcomes === null ? null : (c.json(r.outcomes) as JsonObject),
  };
}

export interface EngineStateRow<J> {
  study_id: string;
  generation: number;
  revision: number;
  version: number;
  state: J;
  created_at: string;
}

export function engineStateFromRow<J>(r: EngineStateRow<J>, c: Columns<J, unknown>): EngineStateRecord {
  return { studyId: r.study_id, generation: r.generation, revision: r.revision, version: r.version, state: c.json(r.state), createdAt: r.created_at };
}

export interface IntermediateRow {
  trial_id: number;
  step: number;
  value: number;
  created_at: string;
}

export function intermediateFromRow(r: IntermediateRow): IntermediateRecord {
  return { trialId: r.trial_id, step: r.step, value: r.value, createdAt: r.created_at };
}

export interface KeyRow {
  id: string;
  tenant_id: string;
  key_hash: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

export function keyFromRow(r: KeyRow): ApiKeyRecord {
  return { id: r.id, tenantId: r.tenant_id, keyHash: r.key_hash, label: r.label, createdAt: r.created_at, revokedAt: r.revoked_at };
}

/**
 * The WHERE clause (from AND) of a trials listing filtered by `state`; `bind` adds a parameter and
 * returns its placeholder in the backend's syntax. With `now`, expired leases count as they read
 * (storage.ts, expiredLeaseCounts): an ACTIVE trial whose lease ran out by then is REQUESTED. Each
 * branch reads the (study_id, state, trial_id) index.
 */
export function stateFilter(state: TrialState | undefined, now: string | undefined, bind: (v: string) => string): string {
  if (!state) return '';
  // IN, not OR across states: both stay range scans of the index (O(REQUESTED + ACTIVE trials), not O(trials)).
  if (now !== undefined && state === 'REQUESTED') return `AND state IN ('REQUESTED', 'ACTIVE') AND (state = 'REQUESTED' OR lease_expires_at <= ${bind(now)})`;
  if (now !== undefined && state === 'ACTIVE') return `AND state = 'ACTIVE' AND (lease_expires_at IS NULL OR lease_expires_at > ${bind(now)})`;
  return `AND state = ${bind(state)}`;
}
