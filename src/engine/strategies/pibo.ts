/**
 * πBO (Hvarfner et al. 2022, ALGORITHM.md §6): BO whose acquisition is weighted by the prior,
 * EI(x)·π(x)^{β/n}, β = options.beta, n = generation index from 1 (the weight decays as data accrue).
 *
 * π is the prior N(0, I) evaluated at the internal coordinates u of the candidate, while the GP is
 * evaluated at the box-normalised coordinates of the same u (bo-core.ts). The reference
 * implementation evaluates the prior at the normalised inputs instead, which makes its prior far too
 * narrow or shifted; that scaling bug is deliberately not reproduced.
 */
import type { StrategyDescriptor } from './types.js';
import { askBo, BO_STATE_VERSION, initBo, tellBo, type BoState } from './bo-core.js';
import { BO_DEFAULTS, BO_OPTIONS } from './options.js';

export const pibo: StrategyDescriptor<BoState> = {
  name: 'pibo',
  options: { ...BO_OPTIONS, beta: { kind: 'number', min: 0, max: 1e3, description: 'πBO prior weight β in EI(x)·π(x)^{β/n}.' } },
  defaults: () => ({ ...BO_DEFAULTS, beta: 1 }),
  minBatch: 1,
  usesBox: true,
  stateVersion: BO_STATE_VERSION,
  init: (spec, rng) => initBo('pibo', spec, rng),
  ask: (state, ctx, count) => askBo(state, ctx, count, Number(state.options.beta ?? 1)),
  tell: (state, ctx) => tellBo(state, ctx),
};
