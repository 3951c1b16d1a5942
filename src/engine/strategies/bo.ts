/**
 * BO baseline (ALGORITHM.md §6): GP on the box-normalised inputs with BO's legacy priors and greedy
 * batch expected improvement. All the machinery is shared with πBO in bo-core.ts; BO is πBO with
 * prior weight β = 0.
 */
import type { Strategy } from './types.js';
import { askBo, initBo, tellBo, type BoState } from './bo-core.js';

export const bo: Strategy<BoState> = {
  name: 'bo',
  init: (spec, rng) => initBo('bo', spec, rng),
  ask: (state, ctx, count) => askBo(state, ctx, count, 0),
  tell: (state, ctx) => tellBo(state, ctx),
};
