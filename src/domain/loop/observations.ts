/**
 * Observations: validate a whole batch before anything changes (all or nothing), then apply it to
 * the in-memory study. By trial id for suggested points, by parameters for points evaluated
 * elsewhere (they become COMPLETED trials with source "external" and join the model's data).
 *
 * Late results: a trial the service gave up on (ABANDONED because its generation's update was made
 * without it, or because the study completed) was still being evaluated by the client that held it
 * last, perhaps for hours. Its result is accepted: the trial becomes COMPLETED with `late` set. It is
 * not part of its generation's update (made already, from other results), but it is in the history
 * every later update and the reports read, exactly like an external observation, and it counts
 * toward max_trials. Only the user's own verdicts stand: a trial a client FAILED or abandoned takes
 * no result.
 *
 * Precedence when a batch has several problems: 400 (every field problem listed), then 404
 * (unknown trial ids), then 409.
 */
import type { TrialRecord } from '../../storage/index.js';
import { pointer, ValidationError, type FieldError } from '../common/errors.js';
import { TrialAlreadyCompletedError, TrialNotActiveError, UnknownTrialsError } from './loop-errors.js';
import type { StudySnapshot } from './study-snapshot.js';
import { givenUp } from './generation.js';
import { isStopped, STOPPED_EARLY } from '../studies/stopping-rule.js';
import { activeParameters, choiceIndex, complete, onGrid, toInternal, vectorFromNamed, type SearchSpace } from '../studies/transforms.js';
import { isCategorical } from '../studies/study-spec.js';
import type { ParamValue } from '../studies/study-request.js';
import type { ObservationInput } from './observation-request.js';
import { outcomesOf, type StudyOutcomes } from '../results/index.js';

export type { ObservationInput } from './observation-request.js';


const byTrial = (o: ObservationInput): o is Extract<ObservationInput, { trial_id: number }> => 'trial_id' in o;

/** Parameter names per search space (spaces are cached per study, so this is built once, not per observation). */
const namesOf = new WeakMap<SearchSpace, Set<string>>();

/**
 * A point given by name: every active parameter, and nothing else (docs/conditional.md). Exported
 * for the import of a study document, whose trials are checked the same way.
 */
export function checkParameters(space: SearchSpace, named: Record<string, ParamValue>, at: string, errors: FieldError[]): void {
  let known = namesOf.get(space);
  if (!known) namesOf.set(space, (known = new Set(space.parameters.map((p) => p.name))));
  for (const name of Object.keys(named)) if (!known.has(name)) errors.push({ path: `${at}/${name}`, message: 'not a parameter of this study' });
  // Which are active follows from the parents' values as given (a missing or unknown parent value leaves its children inactive; it is reported itself).
  const active = space.conditions ? activeParameters(space, vectorFromNamed(space, named)) : null;
  for (const [i, p] of space.parameters.entries()) {
    const v = Object.hasOwn(named, p.name) ? named[p.name] : undefined;
    const path = `${at}/${p.name}`;
    if (active && !active[i]) {
      if (v !== undefined) errors.push({ path, message: `inactive here: ${whenActive(space, i)}; leave it out` });
      continue;
    }
    if (v === undefined) errors.push({ path, message: active && p.condition ? `missing: active here (${whenActive(space, i)}), so it needs a value` : 'missing: every parameter needs a value' });
    else if (isCategorical(p)) {
      if (choiceIndex(p, v) < 0) errors.push({ path, message: `must be one of the choices ${JSON.stringify(p.choices)} (matched by value and JSON type)` });
    } else if (typeof v !== 'number' || !Number.isFinite(v)) errors.push({ path, message: 'must be a finite number' });
    else if (p.bounds && (v < p.bounds[0] || v > p.bounds[1])) errors.push({ path, message: `must lie within the bounds [${p.bounds[0]}, ${p.bounds[1]}]` });
    else if (p.type === 'int' && !Number.isInteger(v)) errors.push({ path, message: 'must be an integer (int parameter)' });
    else if (p.scale === 'log' && !(v > 0)) errors.push({ path, message: 'must be > 0 (log-scaled parameter)' });
    else if (onGrid(space, i, v) === null) {
      // Refused like an int's non-integer: the study never hands out such a value, and snapping it
      // would tell the model a result for a point that was not evaluated.
      const grid = space.grids[i]!;
      errors.push({ path, message: `must be on the grid ${grid.low} + k·${grid.step} (nearest: ${grid.neighbours(v).join(' or ')})` });
    }
  }
}

/** Why parameter i is conditional, for messages: "gamma applies only when kernel is one of [\"rbf\"]". */
function whenActive(space: SearchSpace, i: number): string {
  const c = space.parameters[i]!.condition!;
  return `${space.parameters[i]!.name} applies only when ${c.parent} is one of ${JSON.stringify(c.values)}`;
}

/**
 * A result as stored: one objective's `value`, or several `values`, constraint values, infeasibility
 * (the last three only when set, as a trial read back has them).
 */
interface Result {
  value: number | null;
  stderr: number | null;
  values?: number[];
  constraints?: number[];
  infeasible?: true;
}

/** The result an observation reports, as the study stores it (checked by checkResult first). */
function resultOf(outcomes: StudyOutcomes, o: ObservationInput): Result {
  if (o.infeasible === true) return { value: null, stderr: null, infeasible: true };
  const several = outcomes.objectives.length > 1;
  return {
    value: several ? null : (o.value ?? o.values![0]!),
    stderr: o.stderr ?? null,
    ...(several ? { values: o.values! } : {}),
    ...(outcomes.constraints.length > 0 ? { constraints: o.constraints! } : {}),
  };
}

/** The result's shape against the study's objectives and constraints (docs/multi-objective.md). */
function checkResult(outcomes: StudyOutcomes, o: ObservationInput, at: (field: string) => string, errors: FieldError[]): void {
  const m = outcomes.objectives.length;
  const k = outcomes.constraints.length;
  if (m > 1) {
    if (o.value !== undefined) errors.push({ path: at('value'), message: `this study has ${m} objectives (${outcomes.objectives.map((x) => x.name).join(', ')}): report \`values\`, one per objective` });
    if (o.stderr !== undefined && o.stderr !== null) errors.push({ path: at('stderr'), message: 'a standard error goes with one objective\'s value; this study has several' });
    if ('stopped' in o && o.stopped) errors.push({ path: at('stopped'), message: 'early stopping reads one objective; this study has several' });
  }
  if (o.values !== undefined && o.values.length !== m) errors.push({ path: at('values'), message: `needs one value per objective: ${m} (${outcomes.objectives.map((x) => x.name).join(', ')}), got ${o.values.length}` });
  if (o.infeasible === true) return;
  if (k === 0 && o.constraints !== undefined) errors.push({ path: at('constraints'), message: 'this study declares no constraints' });
  else if (k > 0 && o.constraints === undefined) errors.push({ path: at('constraints'), message: `missing: this study declares ${k} constraint${k > 1 ? 's' : ''} (${outcomes.constraints.map((c) => c.name).join(', ')}), one value each` });
  else if (k > 0 && o.constraints!.length !== k) errors.push({ path: at('constraints'), message: `needs one value per constraint: ${k} (${outcomes.constraints.map((c) => c.name).join(', ')}), got ${o.constraints!.length}` });
}

/** Every problem of the batch, or nothing: throws before any change. */
function validate(snap: StudySnapshot, inputs: readonly ObservationInput[]): void {
  const errors: FieldError[] = [];
  const seen = new Map<number, number>();
  const outcomes = outcomesOf(snap.study);
  inputs.forEach((o, i) => {
    checkResult(outcomes, o, (field) => pointer(['observations', i, field]), errors);
    if (byTrial(o)) {
      const first = seen.get(o.trial_id);
      if (first !== undefined) errors.push({ path: pointer(['observations', i, 'trial_id']), message: `duplicates observation ${first}: one result per trial and batch` });
      else seen.set(o.trial_id, i);
    } else {
      checkParameters(snap.space, o.parameters, pointer(['observations', i, 'parameters']), errors);
    }
  });
  if (errors.length > 0) throw new ValidationError(errors);

  const unknown = inputs.filter(byTrial).map((o) => o.trial_id).filter((id) => !snap.trial(id));
  if (unknown.length > 0) throw new UnknownTrialsError(snap.study.id, unknown);

  for (const o of inputs.filter(byTrial)) {
    const t = snap.trial(o.trial_id)!;
    if (t.state === 'FAILED') throw new TrialNotActiveError(t.trialId, t.state, 'its evaluation was reported as failed, so it takes no result');
    if (t.state === 'ABANDONED' && !givenUp(t)) throw new TrialNotActiveError(t.trialId, t.state, `it was abandoned (${t.failureReason ?? 'no reason'}), so it takes no result`);
    if (t.state === 'COMPLETED' && !sameResult(t, resultOf(outcomes, o), o.stopped ?? false)) throw new TrialAlreadyCompletedError(t.trialId, describeResult(t));
  }
}

const sameList = (a: readonly number[] | null | undefined, b: readonly number[] | undefined) => (a ?? undefined) === undefined ? b === undefined : b !== undefined && a!.length === b.length && a!.every((v, i) => v === b[i]);

const sameResult = (t: TrialRecord, r: Result, stopped: boolean) =>
  t.value === r.value && t.stderr === r.stderr && sameList(t.values, r.values) && sameList(t.constraints, r.constraints) && (t.infeasible ?? false) === (r.infeasible ?? false) && isStopped(t) === stopped;

function describeResult(t: TrialRecord): string {
  if (t.infeasible) return 'as infeasible';
  const what = t.values ? `with values ${JSON.stringify(t.values)}` : `with value ${t.value}${t.stderr === null ? '' : ` ± ${t.stderr}`}`;
  return `${what}${t.constraints ? ` and constraints ${JSON.stringify(t.constraints)}` : ''}${isStopped(t) ? ' (stopped early)' : ''}`;
}

/**
 * Validate, then apply in memory: trials to COMPLETED (identical repeats are no-ops), external
 * points as new COMPLETED trials. Returns the affected trials in request order.
 */
export function applyObservations(snap: StudySnapshot, inputs: readonly ObservationInput[], now: Date): TrialRecord[] {
  validate(snap, inputs);
  const nowIso = now.toISOString();
  const outcomes = outcomesOf(snap.study);
  return inputs.map((o) => {
    const result = resultOf(outcomes, o);
    if (byTrial(o)) {
      const t = snap.trial(o.trial_id)!;
      if (t.state === 'COMPLETED') return t; // identical repeat
      // A late result for an expired lease (back in REQUESTED) is as good as any: same point.
      // A stopped trial keeps why in failure_reason: its value is where its evaluation was cut short.
      const failureReason = o.stopped ? STOPPED_EARLY : null;
      if (!givenUp(t)) return snap.change(t.trialId, { state: 'COMPLETED', ...result, completedAt: nowIso, leaseExpiresAt: null, failureReason });
      return snap.change(t.trialId, { state: 'COMPLETED', ...result, completedAt: nowIso, leaseExpiresAt: null, failureReason, late: true });
    }
    // A stepped value as its grid value (validate accepted it: within float noise of one).
    const x = vectorFromNamed(snap.space, o.parameters).map((v, i) => (typeof v === 'number' ? (onGrid(snap.space, i, v) ?? v) : v));
    // The values given (the active parameters only, on a conditional space); the engine's point has
    // every coordinate, the inactive ones at their neutral values (transforms.ts complete).
    const parameters = Object.fromEntries(snap.space.parameters.flatMap((p, i) => (x[i] === undefined ? [] : [[p.name, x[i]]])));
    return snap.add(
      { state: 'COMPLETED', generation: snap.generation, parameters, point: toInternal(snap.space, complete(snap.space, x)), source: 'external', ...result, completedAt: nowIso },
      nowIso,
    );
  });
}
