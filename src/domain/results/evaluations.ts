/**
 * A study's evaluations: its COMPLETED trials with a value in completion order (completion time,
 * then trial id), each with its 1-based position, the best value up to and including it, and
 * whether it is strictly better than every earlier one (a step of the best-so-far curve; the last
 * step is the study's best trial, the first in completion order on ties). Computed here when trials
 * complete and written by the storage in the same transaction (table study_evaluations), so /best
 * and /history read O(page) rows.
 */
import type { EvaluationRecord, EvaluationsAround, KeyedEvaluation, SummariesStore } from '../../storage/index.js';
import { better, objectiveOf, regret, worstValue, type Direction, type Objective } from './objective.js';

/** A trial that completes with a value, at its place in completion order. */
export interface Completion {
  /** '' for a trial completed without a time (they come first, as the storage orders them). */
  completedAt: string;
  trialId: number;
  value: number;
}

/** Completion order: by completion time, then trial id. */
export function completionKeyOrder(a: { completedAt: string; trialId: number }, b: { completedAt: string; trialId: number }): number {
  return a.completedAt < b.completedAt ? -1 : a.completedAt > b.completedAt ? 1 : a.trialId - b.trialId;
}

/**
 * A trial record's completion, if it is one: COMPLETED with a value and feasible (a point that
 * violates a constraint is never the best; outcomes.ts). A study of several objectives has no
 * `value` and no evaluations: its results are read by front.ts.
 */
export function completionOf(t: { state: string; completedAt: string | null; trialId: number; value: number | null; constraints?: number[] | null }): Completion | null {
  return t.state === 'COMPLETED' && t.value !== null && (t.constraints ?? []).every((c) => c <= 0) ? { completedAt: t.completedAt ?? '', trialId: t.trialId, value: t.value } : null;
}

/**
 * The rows to write when `added` complete, given the study's evaluations around the first of them
 * in completion order (Storage.evaluationsAround, or only the last one when they all come after
 * it): the new rows, and the rows after them renumbered with their best so far and steps as they
 * now are. Empty when nothing is added.
 */
export function placeEvaluations(o: Objective, around: EvaluationsAround, added: readonly Completion[]): KeyedEvaluation[] {
  if (added.length === 0) return [];
  const fresh = [...added].sort(completionKeyOrder);
  const rows: (Completion | KeyedEvaluation)[] = [];
  let i = 0;
  for (const r of around.after) {
    while (i < fresh.length && completionKeyOrder(fresh[i]!, r) < 0) rows.push(fresh[i++]!);
    rows.push(r);
  }
  while (i < fresh.length) rows.push(fresh[i++]!);
  let index = around.before?.index ?? 0;
  let best: number | null = around.before?.bestSoFar ?? null;
  return rows.map((r) => {
    const improved = best === null || better(o, r.value, best);
    if (improved) best = r.value;
    return { completedAt: r.completedAt, index: ++index, trialId: r.trialId, value: r.value, bestSoFar: best!, improved };
  });
}

/**
 * The rows a commit writes when `added` complete, for a study whose last evaluation is `last`: placed
 * after it without a read when they all come after it (results arrive in completion order), else
 * among the stored evaluations read around the first of them. The caller's commit must be guarded
 * by the commit count it read `last` at, so that the rows are written only onto the state they were
 * computed from.
 */
export async function completionRows(storage: Pick<SummariesStore, 'evaluationsAround'>, studyId: string, o: Objective, last: KeyedEvaluation | null, added: readonly Completion[]): Promise<KeyedEvaluation[]> {
  if (added.length === 0) return [];
  const first = added.reduce((a, b) => (completionKeyOrder(a, b) <= 0 ? a : b));
  const around = last === null || completionKeyOrder(last, first) < 0 ? { before: last, after: [] } : await storage.evaluationsAround(studyId, first);
  return placeEvaluations(o, around, added);
}

/** Every evaluation of these completions (any order): a study written whole (an import). */
export function evaluationsOf(o: Objective, completions: readonly Completion[]): KeyedEvaluation[] {
  return placeEvaluations(o, { before: null, after: [] }, completions);
}

/** The evaluation rows of a study written whole (an import, a warm start's copied trials): of its COMPLETED trials with a value. */
export function importedEvaluations(study: { direction: Direction }, trials: readonly { state: string; completedAt: string | null; trialId: number; value: number | null; constraints?: number[] | null }[]): KeyedEvaluation[] {
  return evaluationsOf(objectiveOf(study), trials.flatMap((t) => completionOf(t) ?? []));
}

/** An evaluation as /history reports it: with its simple regret when the optimum is known. */
export interface Evaluation {
  /** 1-based: the number of evaluations so far. */
  index: number;
  trialId: number;
  value: number;
  bestSoFar: number;
  regret: number | null;
}

/** A stored evaluation with its regret against `knownOptimum` (null without one). */
export function withRegret(o: Objective, e: EvaluationRecord, knownOptimum: number | null): Evaluation {
  return { index: e.index, trialId: e.trialId, value: e.value, bestSoFar: e.bestSoFar, regret: knownOptimum === null ? null : regret(o, e.bestSoFar, knownOptimum) };
}

/** Running best and simple regret of completed trials given in completion order (the definition the stored rows follow). */
export function regretHistory(o: Objective, completed: readonly { trialId: number; value: number | null }[], knownOptimum: number | null): Evaluation[] {
  let best = worstValue(o);
  return completed.map((t, i) => {
    const v = t.value!;
    if (better(o, v, best)) best = v;
    return { index: i + 1, trialId: t.trialId, value: v, bestSoFar: best, regret: knownOptimum === null ? null : regret(o, best, knownOptimum) };
  });
}
