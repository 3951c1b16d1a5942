/**
 * A trial record in the API's snake_case, both ways, in one place. The trial resource is exactly
 * `trialFields`; the study document's trial is those fields plus the internal point and
 * `updated_at` (transfer/document-schema.ts), and `fromDocumentTrial` reads one back.
 */
import type { ImportedTrial, TrialRecord } from '../../storage/index.js';
import type { DocumentTrial } from './document-schema.js';

/** What every client sees of a trial, keys in the resource's order (the observations reply is written in this order). */
export function trialFields(t: TrialRecord) {
  return {
    trial_id: t.trialId,
    state: t.state,
    parameters: t.parameters,
    generation: t.generation,
    client_id: t.clientId,
    lease_expires_at: t.leaseExpiresAt,
    value: t.value,
    stderr: t.stderr,
    failure_reason: t.failureReason,
    late: t.late,
    source: t.source,
    created_at: t.createdAt,
    completed_at: t.completedAt,
  };
}

export type TrialFields = ReturnType<typeof trialFields>;

export function toDocumentTrial(t: TrialRecord): DocumentTrial {
  // The fields of several objectives and constraints only when set: other trials export as before.
  return {
    ...trialFields(t),
    ...(t.values ? { values: t.values } : {}),
    ...(t.constraints ? { constraints: t.constraints } : {}),
    ...(t.infeasible ? { infeasible: true as const } : {}),
    point: t.point,
    updated_at: t.updatedAt,
  };
}

/** A checked document trial → the trial of the imported copy, as it was. */
export function fromDocumentTrial(t: DocumentTrial): ImportedTrial {
  return {
    trialId: t.trial_id,
    state: t.state,
    generation: t.generation,
    clientId: t.client_id,
    leaseExpiresAt: t.lease_expires_at,
    parameters: t.parameters,
    point: t.point,
    value: t.value,
    stderr: t.stderr,
    ...(t.values ? { values: t.values } : {}),
    ...(t.constraints ? { constraints: t.constraints } : {}),
    ...(t.infeasible ? { infeasible: true } : {}),
    failureReason: t.failure_reason,
    late: t.late,
    source: t.source,
    createdAt: t.created_at,
    completedAt: t.completed_at,
    updatedAt: t.updated_at,
  };
}
