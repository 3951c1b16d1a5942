/**
 * A trial as the service reports it: the stored record and its `loss` (objective.ts lossOf), so
 * that a client sorts, ranks or keeps the best of trials by a number where lower is better and
 * never decides "better" from the study's direction itself.
 */
import type { TrialRecord } from '../../storage/index.js';
import { lossOf, objectiveOf, type Direction } from './objective.js';

export interface ReportedTrial extends TrialRecord {
  loss: number | null;
}

/** A new object: the record itself (possibly a request's working copy) is left as it is. */
export function reportTrial(study: { direction: Direction }, t: TrialRecord): ReportedTrial {
  return { ...t, loss: lossOf(objectiveOf(study), t.value) };
}
