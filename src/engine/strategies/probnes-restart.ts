/**
 * Restarts of a converged search (docs/ALGORITHM.md §33): the natural-gradient search that has contracted
 * (the largest standard deviation of ν below params.restart.sigma, in prior units) and has not improved its
 * best value for params.restart.after evaluations starts again from the prior, μ = μ₀ and Σ = Σ₀ (N(0, I)
 * in internal coordinates), with the GP keeping every result.
 *
 * Why: Powell's start phase (§29) converges fast to the minimum of the basin it starts in. When that basin
 * is a local one (Ackley's lattice around the prior mean), the search handed over there contracts onto it
 * and then spends the rest of the budget refining a local minimum in the last digits. A search that has
 * stopped improving and stopped exploring gains nothing more where it is; where it converged to the global
 * minimum a restart costs only evaluations after the last improvement.
 *
 * The point the method recommends (`estimate`) stays the centre the search had converged to (`home`) until
 * the restarted search observes a value better than every one before the restart, so /best's recommendation
 * never jumps to the prior mean.
 */
import { InvalidInputError } from '../errors.js';
import { zerosVec } from './es-utils.js';
import { largestVariance, priorCovInBox } from './probnes-start.js';
import type { RestartParams } from './probnes-params.js';
import type { ProbnesState, StallState } from './probnes-state.js';
import type { Observation } from './types.js';

/**
 * The stall record after a tell whose update gave `state` (the new μ and Σ), and the restart when it is due.
 * `batch` is the tell's new results, `history` every result so far.
 */
export function restartAfterTell(state: ProbnesState, batch: readonly Observation[], history: readonly Observation[]): ProbnesState {
  const r = state.params.restart;
  if (!r) return state;
  const n = history.length;
  // The first tracking tell (the first of the natural-gradient search) starts from the best of every result so far.
  const prev: StallState = state.stall ?? { best: history.reduce((m, o) => Math.min(m, o.y), Infinity), since: n, restarts: 0, home: null };
  let { best, since, home } = prev;
  for (const o of batch) {
    if (o.y < best - r.tol * (1 + Math.abs(best))) since = n;
    // A value better than every one before the restart: the restarted search has found more than home held.
    if (o.y < best) home = null;
    best = Math.min(best, o.y);
  }
  const stall: StallState = { ...prev, best, since, home };
  if (n - since < r.after || Math.sqrt(largestVariance(state.cov)) >= r.sigma) return { ...state, stall };
  return { ...state, mean: zerosVec(state.dim), cov: priorCovInBox(state), stall: { best, since: n, restarts: prev.restarts + 1, home: state.mean.slice() } };
}

const fin = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A stored state's restart parameters and stall record are what this engine writes (an imported document may hold anything). */
export function checkStallState(state: ProbnesState): void {
  const r = state.params.restart as unknown;
  if (r !== undefined && !(r && typeof r === 'object' && [(r as RestartParams).after, (r as RestartParams).tol, (r as RestartParams).sigma].every((v) => fin(v) && v >= 0))) {
    throw new InvalidInputError('the stored ProbNES restart parameters must be non-negative numbers');
  }
  const s = state.stall as unknown;
  if (s === undefined) return;
  const st = s as StallState;
  const ok =
    s !== null && typeof s === 'object' &&
    fin(st.best) &&
    Number.isInteger(st.since) && st.since >= 0 &&
    Number.isInteger(st.restarts) && st.restarts >= 0 &&
    (st.home === null || (Array.isArray(st.home) && st.home.length === state.dim && st.home.every(fin)));
  if (!ok) throw new InvalidInputError('the stored ProbNES stall record must hold a best value, non-negative counters and a home of d finite coordinates or null');
}
