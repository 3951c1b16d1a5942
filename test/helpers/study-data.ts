/**
 * Trials and engine states written straight through the Storage API, so the read side can be
 * tested on hand-made values without running the suggest/observe loop.
 */
import type { FastifyInstance } from 'fastify';
import type { EffectivePrior, ParameterSpec } from '../../src/domain/index.js';
import { searchSpace, toInternal, type SearchSpace } from '../../src/domain/studies/transforms.js';
import type { JsonValue, NewTrial, Storage } from '../../src/storage/index.js';
import { getStrategy, type MethodName } from '../../src/engine/index.js';
import { commitWithEvaluations } from './evaluations.js';

export interface CreatedStudy {
  id: string;
  method: string;
  batch_size: number;
  parameters: ParameterSpec[];
  prior: EffectivePrior;
}

export async function createStudy(app: FastifyInstance, body: Record<string, unknown>): Promise<CreatedStudy> {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return res.json() as CreatedStudy;
}

export function spaceOf(study: CreatedStudy): SearchSpace {
  return searchSpace(study.parameters, study.prior);
}

/**
 * A minimal engine state of the shape every strategy stores (BaseState's distribution fields), in the
 * version the method writes now; its parameters are empty (the read side never looks at them).
 */
export function fakeEngineState(study: CreatedStudy, generation: number, mean: number[], cov: number[][], diagnostics = { integral_mean: null as number | null, integral_std: null as number | null, n_active: null as number | null }): JsonValue {
  const d = study.parameters.length;
  const version = getStrategy(study.method as MethodName).stateVersion;
  return { version, method: study.method, dim: d, batchSize: study.batch_size, generation, rng: { kind: 'xoroshiro128plus', words: [1, 2, 3, 4] }, params: {}, mean, cov, diagnostics };
}

/** A trial at user-unit parameters with the matching internal point. */
export function trialAt(study: CreatedStudy, named: Record<string, number>, rest: Omit<NewTrial, 'parameters' | 'point'>): NewTrial {
  const x = study.parameters.map((p) => named[p.name]!);
  return { ...rest, parameters: named, point: toInternal(spaceOf(study), x) };
}

let clock = 0;
/** Distinct, increasing timestamps for hand-made records. */
export const stamp = () => new Date(Date.UTC(2025, 0, 2, 0, 0, 0, clock++)).toISOString();

/** Commit one generation (engine state, stored under its own version, + new trials) on top of whatever the study has. */
export async function commit(storage: Storage, studyId: string, generation: number, state: JsonValue, newTrials: NewTrial[] = []) {
  const latest = await storage.getEngineState(studyId);
  const version = (state as { version: number }).version;
  const res = await commitWithEvaluations(storage, studyId, { expectedRevision: latest?.revision ?? null, generation, engineState: { version, state }, newTrials, now: stamp() });
  if (!res.committed) throw new Error(`commit failed: ${res.reason}`);
  return res.trialIds;
}
