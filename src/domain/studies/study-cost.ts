/**
 * What one study may cost, checked when it is created (docs/capacity.md "Cost of a study").
 *
 * The engine's work per generation grows with the dimension d, the batch size q and the number of
 * points the model is fitted on (the active set n_A): a GP fit is O(n_A³), batch BQ scores q points
 * against it, every point has d coordinates. The cost d · q · n_A is a proxy of that work, bounded
 * by `maxCost` (STUDY_COST_MAX) so that no single study can hold an engine worker for minutes.
 * n_A is the largest active set the method and options allow:
 *
 * - ProbNES with active_set_cap > 0: the cap, or, with the active-set floor (the default profile),
 *   at least ⌈1.5·p⌉ with p = (d + 1)(d + 2)/2 the size of the full quadratic basis (the floor
 *   keeps that many points; probnes-bq.ts quadraticFloor);
 * - ProbNES without a cap, BO, πBO, lq-CMA-ES: every evaluation, so max_trials, or
 *   UNBOUNDED_HORIZON evaluations when the study has no max_trials (its later generations are then
 *   bounded by the engine queue's limits, not by this check);
 * - random and the model-free evolution strategies: no model, n_A = 1.
 *
 * Which case a method is comes from its facts in the registry (`hasModel`, `family`).
 */
import { isMethodName, methodFacts, type Options } from '../../engine/index.js';
import { ValidationError } from '../common/errors.js';

/** Evaluations assumed for a study whose model grows without bound and that has no max_trials. */
export const UNBOUNDED_HORIZON = 1000;

/** The largest active set the method and options allow (see the header). */
export function activeSetBound(method: string, d: number, options: Options, maxTrials: number | null): number {
  const facts = isMethodName(method) ? methodFacts(method) : null;
  if (facts && !facts.hasModel) return 1;
  const horizon = maxTrials ?? UNBOUNDED_HORIZON;
  if (facts?.family !== 'probnes') return horizon;
  const cap = Number(options.active_set_cap ?? 0);
  if (cap <= 0) return horizon;
  // The floor is on in the default profile (a benchmark option otherwise: ALGORITHM.md §16).
  const floorOn = options.active_set_floor === undefined ? options.profile !== 'paper' : options.active_set_floor === true;
  const floor = floorOn ? Math.ceil((1.5 * (d + 1) * (d + 2)) / 2) : 0;
  return Math.max(cap, floor);
}

export function studyCost(method: string, d: number, batchSize: number, options: Options, maxTrials: number | null): number {
  return d * batchSize * activeSetBound(method, d, options, maxTrials);
}

/** 400 naming the fields that set the cost when it exceeds `maxCost`. */
export function checkStudyCost(method: string, d: number, batchSize: number, options: Options, maxTrials: number | null, maxCost: number): void {
  const nA = activeSetBound(method, d, options, maxTrials);
  const cost = d * batchSize * nA;
  if (cost <= maxCost) return;
  const message =
    `the study would cost ${cost.toExponential(2)} (dimension ${d} × batch_size ${batchSize} × active set ${nA}), more than this server's limit ${maxCost.toExponential(2)} ` +
    '(STUDY_COST_MAX): use fewer parameters, a smaller batch_size, a smaller options.active_set_cap, or max_trials for a method whose model uses every evaluation';
  throw new ValidationError([{ path: '/batch_size', message }]);
}
