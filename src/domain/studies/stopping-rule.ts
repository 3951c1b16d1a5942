/**
 * Early-stopping rules: whether a running trial should stop, from its intermediate values and those
 * of the trials that completed. Pure functions; the data come from intermediate.ts.
 *
 * The median rule (docs/early-stopping.md), as Optuna's MedianPruner computes it (its
 * PercentilePruner at the 50th percentile; Vizier's median automated stopping rule compares with
 * running averages instead): a trial reporting step s is told to stop when
 *
 *   1. s ≥ min_steps (Optuna's n_warmup_steps), and
 *   2. at least warmup_trials trials have COMPLETED without being stopped (n_startup_trials), and
 *   3. at least one of those reported a value at exactly step s, and
 *   4. the trial's best value over its steps ≤ s (the minimum when the study minimises, the maximum
 *      when it maximises) is strictly worse than the median of those completed trials' values at s.
 *
 * Trials that were stopped early are not peers (as pruned trials are not in Optuna): their curves
 * end at the step where they were worse than the median, so counting them would drag the median
 * toward stopping ever more trials.
 */
import { bestOf, better, type Objective } from '../results/index.js';
import type { StoppingRule } from './loop-settings.js';

/** failure_reason of a COMPLETED trial whose worker stopped it early: its value is the last intermediate one. */
export const STOPPED_EARLY = 'stopped_early';

export function isStopped(t: { state: string; failureReason: string | null }): boolean {
  return t.state === 'COMPLETED' && t.failureReason === STOPPED_EARLY;
}

/** Why the answer is what it is (a stable code for programs; `detail` says it for people). */
export type StopReason = 'no_rule' | 'trial_finished' | 'before_min_steps' | 'warming_up' | 'no_peers_at_step' | 'not_worse_than_median' | 'worse_than_median';

export interface StopDecision {
  shouldStop: boolean;
  reason: StopReason;
  detail: string;
  /** The median the trial was compared with (null when no comparison was made). */
  median: number | null;
}

export interface StepData {
  step: number;
  /** The trial's own values, at any steps (only those ≤ step count). */
  own: readonly { step: number; value: number }[];
  /** Trials that completed without being stopped. */
  completed: number;
  /** Their values at exactly `step` (those that reported one). */
  peersAtStep: readonly number[];
}

/** The median of a non-empty list (the mean of the two middle values for an even count, as numpy's percentile at 50 with linear interpolation). */
export function median(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

const keep = (reason: StopReason, detail: string): StopDecision => ({ shouldStop: false, reason, detail, median: null });

export function decideStop(rule: StoppingRule | null, objective: Objective, d: StepData): StopDecision {
  if (rule === null) return keep('no_rule', 'the study has no stopping rule');
  if (d.step < rule.min_steps) return keep('before_min_steps', `step ${d.step} is below min_steps ${rule.min_steps}`);
  if (d.completed < rule.warmup_trials) return keep('warming_up', `${d.completed} of the ${rule.warmup_trials} completed trials the rule waits for (warmup_trials)`);
  if (d.peersAtStep.length === 0) return keep('no_peers_at_step', `no completed trial reported a value at step ${d.step}`);
  const bestValue = bestOf(objective, d.own.filter((o) => o.step <= d.step).map((o) => o.value));
  const m = median(d.peersAtStep);
  const worse = better(objective, m, bestValue);
  const what = `best value so far ${bestValue} against the median ${m} of ${d.peersAtStep.length} completed trial(s) at step ${d.step}`;
  return worse ? { shouldStop: true, reason: 'worse_than_median', detail: `${what}: worse, stop`, median: m } : { shouldStop: false, reason: 'not_worse_than_median', detail: `${what}: not worse`, median: m };
}
