/**
 * BO baseline (ALGORITHM.md §6): GP on the box-normalised inputs with BO's legacy priors and greedy
 * batch expected improvement. All the machinery is shared with πBO in bo-core.ts; BO is πBO with
 * prior weight β = 0.
 */
import type { StrategyDescriptor } from './types.js';
import { askBo, BO_STATE_VERSION, estimateBo, initBo, migrateBoState, tellBo, type BoState } from './bo-core.js';
import { askBoMixed, initBoMixed, tellBoMixed } from './bo-mixed.js';
import { BO_DEFAULTS, BO_OPTIONS } from './options.js';

export const bo: StrategyDescriptor<BoState> = {
  name: 'bo',
  options: BO_OPTIONS,
  defaults: () => ({ ...BO_DEFAULTS }),
  minBatch: 1,
  usesBox: true,
  categorical: true,
  stateVersion: BO_STATE_VERSION,
  migrate: (stored) => migrateBoState('bo', stored),
  // Categorical parameters: the mixed-space BO of bo-mixed.ts (ALGORITHM.md §27).
  init: (spec, rng) => (spec.categories?.length ? initBoMixed('bo', spec, rng, BO_OPTIONS) : initBo('bo', spec, rng, BO_OPTIONS)),
  ask: (state, ctx, count) => (state.categorical ? askBoMixed(state, ctx, count) : askBo(state, ctx, count)),
  tell: (state, ctx) => (state.categorical ? tellBoMixed(state, ctx) : tellBo(state, ctx)),
  estimate: (state) => estimateBo(state),
};
