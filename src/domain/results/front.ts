/**
 * The Pareto front of a study and the history of its hypervolume (docs/multi-objective.md,
 * ALGORITHM.md §32.1): computed from the study's COMPLETED trials, feasible ones only, on their
 * losses (every objective minimised), with the engine's exact hypervolume.
 *
 * The reference point is the study's if it declares one; otherwise derived from the front of all the
 * feasible trials (deriveReferencePoint, BoTorch's rule), and the history is computed against that
 * one point, so that its curve is monotone and ends at the front's hypervolume. One objective is the
 * degenerate case: the front is the best trial, the hypervolume r − best loss.
 */
import { deriveReferencePoint, dominates, hypervolume, hypervolumeImprovement } from '../../engine/index.js';
import { feasibleOf, hasResult, lossesOf, referenceLoss, referenceValue, type StudyOutcomes, type TrialResult } from './outcomes.js';

export interface FrontTrial extends TrialResult {
  trialId: number;
}

export interface ReferencePoint {
  /** In the objectives' own units. */
  value: number[];
  /** Derived from the front (the study declares none). */
  derived: boolean;
}

export interface Front<T extends FrontTrial> {
  /** The non-dominated feasible trials, by their first loss (then the next, then trial id). */
  trials: T[];
  /** Null while there is no feasible result and none is declared. */
  referencePoint: ReferencePoint | null;
  hypervolume: number;
  evaluationCount: number;
  feasibleCount: number;
}

/**
 * The non-dominated set of a sequence, maintained point by point: a point dominated by one kept is
 * dropped; a kept point it dominates goes. Equal points do not dominate one another, so trials of
 * equal values are all on the front (as Optuna's best_trials keeps them); a copy adds no hypervolume.
 */
class Staircase<T> {
  readonly kept: { loss: number[]; item: T }[] = [];

  /** Adds the point; false when it does not join the front. */
  add(loss: number[], item: T): boolean {
    for (const k of this.kept) if (dominates(k.loss, loss)) return false;
    for (let i = this.kept.length - 1; i >= 0; i--) if (dominates(loss, this.kept[i]!.loss)) this.kept.splice(i, 1);
    this.kept.push({ loss, item });
    return true;
  }
}

/** Feasible trials with their losses, in the order given. */
function feasibleLosses<T extends FrontTrial>(o: StudyOutcomes, trials: readonly T[]): { loss: number[]; trial: T }[] {
  const out: { loss: number[]; trial: T }[] = [];
  for (const t of trials) {
    if (feasibleOf(t) !== true) continue;
    const loss = lossesOf(o, t);
    if (loss !== null && loss.length === o.objectives.length) out.push({ loss, trial: t });
  }
  return out;
}

/** The reference point in losses: the declared one, or derived from the front's losses (null without any). */
function referenceOf(o: StudyOutcomes, frontLosses: readonly number[][]): { loss: number[]; derived: boolean } | null {
  const declared = referenceLoss(o);
  if (declared) return { loss: declared, derived: false };
  return frontLosses.length === 0 ? null : { loss: deriveReferencePoint(frontLosses), derived: true };
}

/** The study's front of `trials` (its COMPLETED trials, any order; others are skipped). */
export function frontOf<T extends FrontTrial>(o: StudyOutcomes, trials: readonly T[]): Front<T> {
  const feasible = feasibleLosses(o, [...trials].sort((a, b) => a.trialId - b.trialId));
  const stairs = new Staircase<T>();
  for (const f of feasible) stairs.add(f.loss, f.trial);
  const kept = stairs.kept.sort((a, b) => {
    for (let i = 0; i < a.loss.length; i++) if (a.loss[i] !== b.loss[i]) return a.loss[i]! - b.loss[i]!;
    return a.item.trialId - b.item.trialId;
  });
  const losses = kept.map((k) => k.loss);
  const r = referenceOf(o, losses);
  return {
    trials: kept.map((k) => k.item),
    referencePoint: r && { value: referenceValue(o, r.loss), derived: r.derived },
    hypervolume: r === null || losses.length === 0 ? 0 : hypervolume(losses, r.loss),
    evaluationCount: trials.filter(hasResult).length,
    feasibleCount: feasible.length,
  };
}

export interface FrontHistoryPoint {
  /** 1-based: the number of results so far (infeasible ones included). */
  index: number;
  trialId: number;
  hypervolume: number;
  frontSize: number;
}

/**
 * After each result in `completed` (COMPLETED trials in completion order), the hypervolume of the
 * front of the feasible ones so far, against one reference point: the declared one, or the one derived
 * from the final front (so the last point equals frontOf's hypervolume). O(n·|front|) for two
 * objectives; each step adds the new point's improvement (hypervolumeImprovement) to the last.
 */
export function frontHistory(o: StudyOutcomes, completed: readonly FrontTrial[]): { referencePoint: ReferencePoint | null; points: FrontHistoryPoint[] } {
  const withResult = completed.filter(hasResult);
  const feasible = new Map(feasibleLosses(o, withResult).map((f) => [f.trial, f.loss]));
  const final = new Staircase<null>();
  for (const loss of feasible.values()) final.add(loss, null);
  const r = referenceOf(o, final.kept.map((k) => k.loss));
  const stairs = new Staircase<null>();
  let hv = 0;
  const points = withResult.map((t, i) => {
    const loss = feasible.get(t);
    if (loss && r) {
      const front = stairs.kept.map((k) => k.loss);
      if (stairs.add(loss, null)) hv += hypervolumeImprovement(loss, front, r.loss);
    }
    return { index: i + 1, trialId: t.trialId, hypervolume: hv, frontSize: stairs.kept.length };
  });
  return { referencePoint: r && { value: referenceValue(o, r.loss), derived: r.derived }, points };
}

