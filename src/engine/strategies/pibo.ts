/**
 * πBO (Hvarfner et al. 2022, ALGORITHM.md §6): BO whose acquisition is weighted by the prior,
 * EI(x)·π(x)^{β/n}, β = params.beta (option beta), n = generation index from 1 (the weight decays as data accrue).
 *
 * π is the prior N(0, I) evaluated at the internal coordinates u of the candidate, while the GP is
 * evaluated at the box-normalised coordinates of the same u (bo-core.ts). The reference
 * implementation evaluates the prior at the normalised inputs instead, which makes its prior far too
 * narrow or shifted; that scaling bug is deliberately not reproduced.
 */
import type { StrategyDescriptor } from './types.js';
import { askBo, BO_STATE_VERSION, estimateBo, initBo, migrateBoState, tellBo, type BoState } from './bo-core.js';
import { askBoMixed, initBoMixed, tellBoMixed } from './bo-mixed.js';
import { BO_DEFAULTS, BO_OPTIONS, type OptionSpecs } from './options.js';

const PIBO_OPTIONS: OptionSpecs = { ...BO_OPTIONS, beta: { kind: 'number', min: 0, max: 1e3, description: 'πBO prior weight β in EI(x)·π(x)^{β/n}.' } };

export const pibo: StrategyDescriptor<BoState> = {
  name: 'pibo',
  options: PIBO_OPTIONS,
  defaults: () => ({ ...BO_DEFAULTS, beta: 1 }),
  minBatch: 1,
  usesBox: true,
  categorical: true,
  stateVersion: BO_STATE_VERSION,
  migrate: (stored) => migrateBoState('pibo', stored),
  // Categorical parameters: the mixed-space BO of bo-mixed.ts (ALGORITHM.md §27).
  init: (spec, rng) => (spec.categories?.length ? initBoMixed('pibo', spec, rng, PIBO_OPTIONS) : initBo('pibo', spec, rng, PIBO_OPTIONS)),
  ask: (state, ctx, count) => (state.categorical ? askBoMixed(state, ctx, count) : askBo(state, ctx, count)),
  tell: (state, ctx) => (state.categorical ? tellBoMixed(state, ctx) : tellBo(state, ctx)),
  estimate: (state) => estimateBo(state),
};
