/**
 * Table rows to storage records, for both backends. The tables have the same columns in SQLite and
 * PostgreSQL; what differs is how the driver hands back a JSON column (better-sqlite3: the text;
 * node-postgres: already parsed) and a boolean (SQLite has none: 0 or 1). A backend passes those
 * two readings as its `Columns`; everything else is mapped here once (studies: study-columns.ts;
 * trials: trial-columns.ts).
 */
import type { ApiKeyRecord, EngineStateRecord, IntermediateRecord, JsonValue, TrialState } from './storage.js';

/** How one driver returns a JSON column (stored as J) and a boolean (stored as B). */
export interface Columns<J, B> {
  json(v: J): JsonValue;
  bool(v: B): boolean;
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
