/**
 * The study document: a whole study (specification, state, trials, engine-state snapshots) as one
 * JSON value, for `GET /export` and `POST /import`. It carries the internal points and the engine
 * states (RNG state included), so an imported copy hands out exactly the suggestions the original
 * would have. Field names are snake_case like the rest of the API: the document is a file format.
 * Both directions of the mapping live here: records → document (export), document → records (import).
 */
import type { EngineStateRecord, ImportedEngineState, ImportedStudy, ImportedTrial, IntermediateRecord, JsonObject, TrialRecord } from '../../storage/index.js';
import { writeLoopSettings } from '../studies/loop-settings.js';
import { declaresOutcomes, outcomesOf, writeOutcomes } from '../results/outcomes.js';
import { resolveOptions } from '../../engine/index.js';
import type { Study } from '../studies/studies.js';
import { writeJson, writeJsonObject } from '../studies/codec.js';
import { fromDocumentTrial, toDocumentTrial } from './trial-fields.js';
import { DOCUMENT_FORMAT, DOCUMENT_VERSION, type StudyDocument } from './document-schema.js';

export type { StudyDocument } from './document-schema.js';

export function toDocument(study: Study, trials: TrialRecord[], states: EngineStateRecord[], exportedAt: string, intermediate: IntermediateRecord[] = []): StudyDocument {
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
      options: study.options,
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
      allow_repeats: study.loop.allowRepeats,
      stopping: study.loop.stopping,
      // Only when declared: a study of one objective without constraints exports exactly as before.
      ...(declaresOutcomes(study) ? { objectives: outcomesOf(study).objectives, constraints: outcomesOf(study).constraints, reference_point: outcomesOf(study).referencePoint } : {}),
    },
    trials: trials.map(toDocumentTrial),
    engine_states: states.map((e) => ({ generation: e.generation, revision: e.revision, version: e.version, state: e.state as JsonObject, created_at: e.createdAt })),
    intermediate_values: intermediate.map((r) => ({ trial_id: r.trialId, step: r.step, value: r.value, created_at: r.createdAt })),
  };
}

/** A checked document → the records of its copy: a new id and tenant, created and updated `now`, trials and states as they were. */
export function fromDocument(
  doc: StudyDocument,
  copy: { id: string; tenantId: string; now: string },
): { study: ImportedStudy; trials: ImportedTrial[]; engineStates: ImportedEngineState[]; intermediate: IntermediateRecord[] } {
  const s = doc.study;
  return {
    study: {
      id: copy.id,
      tenantId: copy.tenantId,
      name: s.name,
      direction: s.direction,
      parameters: writeJson(s.parameters),
      prior: writeJson(s.prior),
      method: s.method,
      batchSize: s.batch_size,
      // Exported options are already effective; resolving again only fills what a hand-written
      // document left out, with the same defaults the original got.
      options: resolveOptions(s.method, s.parameters.length, s.options),
      seed: s.seed,
      maxTrials: s.max_trials,
      leaseSeconds: s.lease_seconds,
      knownOptimum: s.known_optimum,
      metadata: writeJsonObject(s.metadata),
      state: s.state,
      reason: s.reason,
      generation: s.generation,
      createdAt: copy.now,
      updatedAt: copy.now,
      loopSettings: writeLoopSettings({ allowRepeats: s.allow_repeats, stopping: s.stopping }),
      outcomes: writeOutcomes({ direction: s.direction, objectives: s.objectives ?? null, constraints: s.constraints ?? null, reference_point: s.reference_point ?? null }),
    },
    trials: doc.trials.map(fromDocumentTrial),
    engineStates: doc.engine_states.map((e) => ({ generation: e.generation, revision: e.revision, version: e.version, state: writeJson(e.state), createdAt: e.created_at })),
    intermediate: doc.intermediate_values.map((r) => ({ trialId: r.trial_id, step: r.step, value: r.value, createdAt: r.created_at })),
  };
}
