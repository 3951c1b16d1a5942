/**
 * Random search (ALGORITHM.md §6): i.i.d. samples from the prior, which is N(0, I) in the whitened
 * internal coordinates (§0). The distribution never changes; `tell` only validates the batch and
 * advances the generation counter, so a study's history and generation bookkeeping look like every
 * other method's.
 *
 * Glossary: d = `dim`; `mean` = 0 (d), `cov` = I (d×d).
 *
 * Categorical parameters (InitSpec.categories, ALGORITHM.md §27): the continuous coordinates are
 * drawn as above, then one choice per categorical parameter from its prior p_j (kept as
 * `categorical`); `mean` and `cov` are over the d_c = d − m continuous coordinates. Without
 * categorical parameters nothing changes, draw for draw.
 */
import { Rng } from '../random/index.js';
import type { AskContext, AskResult, BaseState, InitSpec, StrategyDescriptor, TellContext } from './types.js';
import { NO_DIAGNOSTICS, assertFinite, checkBatch, checkCount, checkDim, identityRows, migrateOptionsState, zerosVec } from './es-utils.js';
import { checkedOptions } from './options.js';
import { sampleChoices } from '../distributions/categorical.js';

/** Version 2: `params` (none) instead of the options (version 1 is read by `migrate`). */
export const RANDOM_STATE_VERSION = 2;

export interface RandomState extends BaseState {
  method: 'random';
  /** Random search has no parameters. */
  params: Record<string, never>;
}

function init(spec: InitSpec, rng: Rng): RandomState {
  checkDim(spec.dim, spec.batchSize, 'random');
  const d = spec.dim;
  checkedOptions('random', {}, spec.options);
  const q = spec.categories ?? [];
  const dc = d - q.length;
  return {
    version: RANDOM_STATE_VERSION, method: 'random', dim: d, batchSize: spec.batchSize, generation: 0,
    rng: rng.state(), params: {}, mean: zerosVec(dc), cov: identityRows(dc),
    ...(q.length > 0 ? { categorical: q.map((p) => [...p]) } : {}),
    diagnostics: { ...NO_DIAGNOSTICS },
  };
}

function ask(state: RandomState, _ctx: AskContext, count: number): AskResult<RandomState> {
  checkCount(count, 'random');
  const rng = Rng.fromState(state.rng);
  const points: number[][] = [];
  const q = state.categorical ?? [];
  for (let k = 0; k < count; k++) {
    const x = Array.from(rng.normals(state.dim - q.length));
    assertFinite(x, 'random: sampled point');
    points.push(q.length > 0 ? [...x, ...sampleChoices(rng, q)] : x);
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
  categorical: true,
  stateVersion: RANDOM_STATE_VERSION,
  migrate: (stored) => migrateOptionsState<RandomState>('random', RANDOM_STATE_VERSION, stored, () => ({})),
  init,
  ask,
  tell,
};
