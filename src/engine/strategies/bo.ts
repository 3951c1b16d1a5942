/**
 * BO baseline (ALGORITHM.md §6): GP on the box-normalised inputs with BO's legacy priors and greedy
 * batch expected improvement. All the machinery is shared with πBO in bo-core.ts; BO is πBO with
 * prior weight β = 0.
 */
import type { StrategyDescriptor } from './types.js';
import { askBo, BO_STATE_VERSION, initBo, tellBo, type BoState } from './bo-core.js';
import { BO_DEFAULTS, BO_OPTIONS } from './options.js';

export const bo: StrategyDescriptor<BoState> = {
  name: 'bo',
  options: BO_OPTIONS,
  defaults: () => ({ ...BO_DEFAULTS }),
  minBatch: 1,
  usesBox: true,
  stateVersion: BO_STATE_VERSION,
  init: (spec, rng) => initBo('bo', spec, rng),
  ask: (state, ctx, count) => askBo(state, ctx, count, 0),
  tell: (state, ctx) => tellBo(state, ctx),
};
