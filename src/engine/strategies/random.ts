/**
 * Random search (ALGORITHM.md §6): i.i.d. samples from the prior, which is N(0, I) in the whitened
 * internal coordinates (§0). The distribution never changes; `tell` only validates the batch and
 * advances the generation counter, so a study's history and generation bookkeeping look like every
 * other method's.
 *
 * Glossary: d = `dim`; `mean` = 0 (d), `cov` = I (d×d).
 */
import { Rng } from '../random/index.js';
import type { AskContext, AskResult, BaseState, InitSpec, StrategyDescriptor, TellContext } from './types.js';
import { NO_DIAGNOSTICS, assertFinite, checkBatch, checkCount, checkDim, identityRows, zerosVec } from './es-utils.js';

export const RANDOM_STATE_VERSION = 1;

export interface RandomState extends BaseState {
  method: 'random';
}

function init(spec: InitSpec, rng: Rng): RandomState {
  checkDim(spec.dim, spec.batchSize, 'random');
  const d = spec.dim;
  return {
    version: RANDOM_STATE_VERSION, method: 'random', dim: d, batchSize: spec.batchSize, generation: 0,
    rng: rng.state(), options: { ...spec.options }, mean: zerosVec(d), cov: identityRows(d),
    diagnostics: { ...NO_DIAGNOSTICS },
  };
}

function ask(state: RandomState, _ctx: AskContext, count: number): AskResult<RandomState> {
  checkCount(count, 'random');
  const rng = Rng.fromState(state.rng);
  const points: number[][] = [];
  for (let k = 0; k < count; k++) {
    const x = Array.from(rng.normals(state.dim));
    assertFinite(x, 'random: sampled point');
    points.push(x);
  }
  return { points, state: { ...state, rng: rng.state() } };
}

function tell(state: RandomState, ctx: TellContext): RandomState {
  checkBatch(ctx.batch, state.dim, 'random');
  return { ...state, generation: state.generation + 1 };
}

export const random: StrategyDescriptor<RandomState> = {
  name: 'random',
  options: {},
  defaults: () => ({}),
  minBatch: 1,
  usesBox: false,
  stateVersion: RANDOM_STATE_VERSION,
  init,
  ask,
  tell,
};
