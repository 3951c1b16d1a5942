/**
 * Stored ProbNES states of every version, read as the current one (version 3, probnes-core.ts).
 *
 * Version 2 had no start phase (§29): it reads as a state whose phase is off (params.startPhase 'off',
 * length 0, `start` null), which every version-2 state was, so it continues bit for bit.
 *
 * Version 1 kept the options and read each by name, with a fallback for every option added after the
 * first release; its GP targets were named `z` in the first releases and `negYTilde` later; `quad`,
 * `basis`, `bounds`, `optimumRadius` and `optimumAsked` were written only when they had a value. The
 * migration resolves the parameters the version-1 engine used (probnes-params.ts paramsFromV1Options)
 * and writes every field, so a study stored by that engine continues bit for bit
 * (test/engine/state-migrations.test.ts replays stored version-1 states).
 */
import { InvalidInputError } from '../errors.js';
import type { MethodName } from './methods.js';
import { PROBNES_STATE_VERSION as CURRENT, checkEstimateResiduals, type ProbnesState, type StoredGp } from './probnes-state.js';
import { NO_START_PHASE, paramsFromV1Options, type ProbnesOwn } from './probnes-params.js';
import type { StoredState } from './types.js';
import { checkStartState } from './probnes-start.js';
import { checkStallState } from './probnes-restart.js';


function fromV2(s: StoredState): ProbnesState {
  const { params, ...rest } = s as StoredState & { params?: Record<string, unknown> };
  if (!params || typeof params !== 'object') throw new InvalidInputError('the stored ProbNES state (version 2) has no params');
  return {
    ...(rest as unknown as Omit<ProbnesState, 'params' | 'start'>),
    version: CURRENT,
    params: Object.freeze({ ...(params as unknown as ProbnesState['params']), ...NO_START_PHASE }),
    start: null,
  };
}

function fromV1(method: MethodName, own: ProbnesOwn, s: StoredState): ProbnesState {
  const { options, gp, bounds, optimumRadius, optimumAsked, ...rest } = s as StoredState & {
    options?: Record<string, unknown>;
    gp?: (Omit<StoredGp, 'negYTilde' | 'quad' | 'basis'> & { negYTilde?: number[]; z?: number[]; quad?: StoredGp['quad']; basis?: StoredGp['basis'] }) | null;
    bounds?: ProbnesState['bounds'];
    optimumRadius?: number;
    optimumAsked?: ProbnesState['optimumAsked'];
  };
  if (!options || typeof options !== 'object') throw new InvalidInputError('the stored ProbNES state (version 1) has no options');
  const params = paramsFromV1Options(method, own, options);
  let storedGp: StoredGp | null = null;
  if (gp) {
    const { z, negYTilde, quad, basis, ...g } = gp;
    const targets = negYTilde ?? z;
    if (!targets) throw new InvalidInputError('the stored ProbNES state (version 1) has a GP without its targets');
    storedGp = { ...g, negYTilde: targets, quad: quad ?? null, basis: quad ? (basis ?? 'constant') : 'constant' };
  }
  const adapts = params.optimumRadiusMax > params.optimumRadius;
  return {
    ...(rest as unknown as Omit<ProbnesState, 'params' | 'gp' | 'bounds' | 'optimumRadius' | 'optimumAsked'>),
    version: CURRENT,
    params,
    gp: storedGp,
    bounds: bounds ?? null,
    // Version 1 read ρ_t only while it adapts, ρ₀ otherwise.
    optimumRadius: adapts ? (optimumRadius ?? params.optimumRadius) : params.optimumRadius,
    optimumAsked: optimumAsked ?? null,
    start: null,
  };
}

export function migrateProbnesState(method: MethodName, own: ProbnesOwn, stored: StoredState): ProbnesState {
  if (stored.version === CURRENT) {
    const state = stored as unknown as ProbnesState;
    checkStartState(state);
    checkEstimateResiduals(state);
    checkStallState(state);
    return state;
  }
  if (stored.version === 2) return fromV2(stored);
  if (stored.version === 1) return fromV1(method, own, stored);
  throw new InvalidInputError(`${method} reads engine states of versions 1 to ${CURRENT}, not ${String(stored.version)}`);
}
