/**
 * Stored JSON into typed values and back, in one place. Storage hands back its own JSON types; the
 * service wrote those values, and here they are read back: a study's parameters, prior, method and
 * options, and engine states, which are checked for their method and version so that a state
 * another release wrote is refused with a clear error instead of being fed to a strategy that would
 * misread it. The way in (checked values typed as storage's JSON) is here too. What a value means
 * for the study's direction is src/domain/results.
 */
import { EngineError, getStrategy, isMethodName, type BaseState, type MethodName, type Options } from '../../engine/index.js';
import type { JsonObject, JsonValue, StudyRecord } from '../../storage/index.js';
import { DomainError } from '../common/errors.js';
import type { EffectivePrior, ParameterSpec } from './study-spec.js';
import { stepOf } from './grid.js';
import { readLoopSettings, type LoopSettings } from './loop-settings.js';

export type { Direction } from '../results/objective.js';

/** A study as the service hands it out: the stored record with its JSON fields narrowed. */
export interface Study extends Omit<StudyRecord, 'method' | 'parameters' | 'prior' | 'options'> {
  method: MethodName;
  parameters: ParameterSpec[];
  prior: EffectivePrior;
  /** Effective options, defaults filled in. */
  options: Options;
  /** Repeats and early stopping (loop-settings.ts). */
  loop: LoopSettings;
}

/** Stored data this server cannot read (written by another release, or damaged). */
export class StoredDataError extends DomainError {
  constructor(studyId: string, what: string) {
    super('unavailable', 'stored_data_unreadable', `study ${JSON.stringify(studyId)}: ${what}; this server cannot use it (restore a backup made for this release, or run the release that wrote it)`);
  }
}

/** A study record with its JSON fields read back as the types the service wrote. */
export function readStudy(r: StudyRecord): Study {
  if (!isMethodName(r.method)) throw new StoredDataError(r.id, `its method ${JSON.stringify(r.method)} is not one this server knows`);
  return {
    ...r,
    method: r.method,
    parameters: readParameters(r.parameters as unknown as ParameterSpec[]),
    prior: r.prior as unknown as EffectivePrior,
    options: r.options as Options,
    loop: readLoopSettings(r.loopSettings),
  };
}

/** Studies stored before parameters had a step read with the one they had: 1 for an int, none for a float. */
function readParameters(parameters: ParameterSpec[]): ParameterSpec[] {
  const missing = (p: ParameterSpec) => p.type !== 'categorical' && (p as { step?: number | null }).step === undefined;
  if (!parameters.some(missing)) return parameters;
  return parameters.map((p) => (missing(p) ? { ...p, step: stepOf(p) } : p));
}

/**
 * A value the service checked to be plain JSON (a validated request or document: finite numbers,
 * strings, booleans, null, arrays and objects of them) as storage types it.
 */
export function writeJson(v: unknown): JsonValue {
  return v as JsonValue;
}

/** A checked JSON object (metadata) as storage types it. */
export function writeJsonObject(v: Record<string, unknown>): JsonObject {
  return v as JsonObject;
}

/**
 * An engine state as stored, checked to be one the study's strategy wrote, and read as the version the
 * strategy writes now: a state an earlier release stored goes through the strategy's migration (so a
 * study continues across releases); one it cannot read (a later release's) is refused.
 */
export function readEngineState(studyId: string, method: MethodName, stored: { version: number; state: JsonValue }): BaseState {
  const s = stored.state;
  if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new StoredDataError(studyId, 'its engine state is not an object');
  if (s.method !== method) throw new StoredDataError(studyId, `its engine state belongs to method ${JSON.stringify(s.method)}, not the study's ${method}`);
  if (typeof s.version !== 'number') throw new StoredDataError(studyId, `its engine state has no version number (${JSON.stringify(s.version) ?? 'none'})`);
  if (stored.version !== s.version) throw new StoredDataError(studyId, `its engine state has version ${s.version} but was stored as version ${stored.version}`);
  try {
    return getStrategy(method).migrate({ ...s, version: s.version, method });
  } catch (e) {
    if (e instanceof EngineError) throw new StoredDataError(studyId, `its engine state (version ${s.version}) cannot be read: ${e.message}`);
    throw e;
  }
}

/** An engine state as storage keeps it. */
export function writeEngineState(state: BaseState): { version: number; state: JsonValue } {
  return { version: state.version, state: state as unknown as JsonValue };
}
