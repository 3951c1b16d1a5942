/**
 * A trial as the service reports it: the stored record, its `loss` (objective.ts lossOf) and, for
 * every study, its `losses` and whether it is `feasible` (outcomes.ts), so that a client sorts,
 * ranks, plots or keeps the best of trials by numbers where lower is better and never decides
 * "better" from the study's directions itself.
 */
import type { TrialRecord } from '../../storage/index.js';
import { lossOf, objectiveOf } from './objective.js';
import { feasibleOf, lossesOf, outcomesOf, type OutcomeStudy } from './outcomes.js';

export interface ReportedTrial extends TrialRecord {
  loss: number | null;
  losses: number[] | null;
  feasible: boolean | null;
}

/** A new object: the record itself (possibly a request's working copy) is left as it is. */
export function reportTrial(study: OutcomeStudy, t: TrialRecord): ReportedTrial {
  return { ...t, loss: lossOf(objectiveOf(study), t.value), losses: lossesOf(outcomesOf(study), t), feasible: feasibleOf(t) };
}
