/**
 * What a study's results are when they are more than one number (docs/multi-objective.md): its
 * objectives (each a name and a direction), its constraints (a point is feasible when every
 * constraint's value is ≤ 0, Optuna's convention) and the reference point of its hypervolume. A
 * study that declares none of these has one objective in `direction` and stores nothing more.
 *
 * Like objective.ts, this is the one place that decides: which values a trial holds, whether it is
 * feasible, and its losses (each objective as the engine minimises it), which the API reports so that
 * clients and the dashboard rank and plot without reading directions.
 */
import type { JsonObject } from '../../storage/index.js';
import { engineValue, type Direction } from './objective.js';

/** The most objectives a study may declare: the exact hypervolume's cost grows steeply with their number (ALGORITHM.md §32.1). */
export const MAX_OBJECTIVES = 5;
/** The most constraints a study may declare. */
export const MAX_CONSTRAINTS = 20;
/** The name of a study's one objective when it declares none. */
export const DEFAULT_OBJECTIVE_NAME = 'value';

export interface NamedObjective {
  name: string;
  direction: Direction;
}

export interface StudyOutcomes {
  objectives: NamedObjective[];
  constraints: { name: string }[];
  /** In the objectives' own units; null: derived from the front when needed. */
  referencePoint: number[] | null;
}

/** A study as this module reads it: its direction and the stored outcomes (null or absent: one objective, no constraints). */
export interface OutcomeStudy {
  direction: Direction;
  outcomes?: JsonObject | null;
}

const read = new WeakMap<object, StudyOutcomes>();

/** A study that declares nothing: one objective named `value` in its direction (shared, never changed). */
const ONE_OBJECTIVE: Record<Direction, StudyOutcomes> = {
  minimize: Object.freeze({ objectives: [Object.freeze({ name: DEFAULT_OBJECTIVE_NAME, direction: 'minimize' as const })], constraints: [], referencePoint: null }),
  maximize: Object.freeze({ objectives: [Object.freeze({ name: DEFAULT_OBJECTIVE_NAME, direction: 'maximize' as const })], constraints: [], referencePoint: null }),
};

/** The study's outcomes, read once per stored JSON object. */
export function outcomesOf(study: OutcomeStudy): StudyOutcomes {
  const stored = study.outcomes;
  if (!stored) return ONE_OBJECTIVE[study.direction];
  let o = read.get(stored);
  if (!o) {
    // The service wrote it (writeOutcomes) from a checked request or document.
    const s = stored as unknown as { objectives: NamedObjective[]; constraints?: { name: string }[]; reference_point?: number[] | null };
    o = { objectives: s.objectives, constraints: s.constraints ?? [], referencePoint: s.reference_point ?? null };
    read.set(stored, o);
  }
  return o;
}

/** What a study stores for its outcomes: null when it declares nothing beyond a direction (today's stored form). */
export function writeOutcomes(given: { direction: Direction; objectives?: NamedObjective[] | null; constraints?: { name: string }[] | null; reference_point?: number[] | null }): JsonObject | null {
  if (!given.objectives && !given.constraints?.length && !given.reference_point) return null;
  return {
    objectives: (given.objectives ?? [{ name: DEFAULT_OBJECTIVE_NAME, direction: given.direction }]).map((o) => ({ name: o.name, direction: o.direction })),
    constraints: (given.constraints ?? []).map((c) => ({ name: c.name })),
    reference_point: given.reference_point ?? null,
  } as JsonObject;
}

/** The outcomes a study document or resource shows: null fields for a study that declares nothing. */
export const declaresOutcomes = (study: OutcomeStudy): boolean => !!study.outcomes;

export const severalObjectives = (o: StudyOutcomes): boolean => o.objectives.length > 1;

/** Whether the engine reads this study's results as more than one value each (several objectives or constraints). */
export const needsOutcomeModel = (o: StudyOutcomes): boolean => o.objectives.length > 1 || o.constraints.length > 0;

/** The outcomes the engine must be told of (ModelHistory): the study's when it has several objectives or constraints, else null. */
export function modelOutcomes(study: OutcomeStudy): StudyOutcomes | null {
  const o = outcomesOf(study);
  return needsOutcomeModel(o) ? o : null;
}

/** A trial's reported result, as stored. */
export interface TrialResult {
  state: string;
  value: number | null;
  values?: number[] | null;
  constraints?: number[] | null;
  infeasible?: boolean | null;
}

/** The objectives' values of a trial in declared order: `values`, or [value] for one objective; null without any. */
export function valuesOf(t: Pick<TrialResult, 'value' | 'values'>): number[] | null {
  return t.values ?? (t.value === null ? null : [t.value]);
}

/** Has a result (COMPLETED with values, or reported infeasible). */
export const hasResult = (t: TrialResult): boolean => t.state === 'COMPLETED' && (t.infeasible === true || valuesOf(t) !== null);

/**
 * Feasible: a result that was not reported infeasible and meets every constraint (each value ≤ 0);
 * false for a result that does not; null without a result.
 */
export function feasibleOf(t: TrialResult): boolean | null {
  if (!hasResult(t)) return null;
  if (t.infeasible === true) return false;
  return (t.constraints ?? []).every((c) => c <= 0);
}

/** The values as the engine minimises them (maximised objectives negated): what /front ranks and the dashboard plots; null without values. */
export function lossesOf(o: StudyOutcomes, t: Pick<TrialResult, 'value' | 'values'>): number[] | null {
  const v = valuesOf(t);
  return v === null ? null : v.map((x, i) => engineValue(o.objectives[i]!, x));
}

/** The reference point in losses (the declared one negated where maximised), or null when none is declared. */
export function referenceLoss(o: StudyOutcomes): number[] | null {
  return o.referencePoint === null ? null : o.referencePoint.map((x, i) => engineValue(o.objectives[i]!, x));
}

/** A reference point given in losses, in the objectives' own units (referenceLoss's inverse). */
export function referenceValue(o: StudyOutcomes, loss: readonly number[]): number[] {
  return loss.map((x, i) => engineValue(o.objectives[i]!, x));
}
