/**
 * πBO (Hvarfner et al. 2022, ALGORITHM.md §6): BO whose acquisition is weighted by the prior,
 * EI(x)·π(x)^{β/n}, β = options.beta, n = generation index from 1 (the weight decays as data accrue).
 *
 * π is the prior N(0, I) evaluated at the internal coordinates u of the candidate, while the GP is
 * evaluated at the box-normalised coordinates of the same u (bo-core.ts). The reference
 * implementation evaluates the prior at the normalised inputs instead, which makes its prior far too
 * narrow or shifted; that scaling bug is deliberately not reproduced.
 */
import type { Strategy } from './types.js';
import { askBo, initBo, tellBo, type BoState } from './bo-core.js';

export const pibo: Strategy<BoState> = {
  name: 'pibo',
  init: (spec, rng) => initBo('pibo', spec, rng),
  ask: (state, ctx, count) => askBo(state, ctx, count, Number(state.options.beta ?? 1)),
  tell: (state, ctx) => tellBo(state, ctx),
};
