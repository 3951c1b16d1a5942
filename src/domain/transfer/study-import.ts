/**
 * The consistency checks of an imported study document, beyond its structure (which its schema,
 * document-schema.ts, checks): the specification is a valid study, every trial and engine state
 * fits it and each other, and every number is finite. Problems are reported together, each at its JSON
 * pointer inside the document, because a rejected import is rewritten by hand or by a script; the
 * checks stop at MAX_ERRORS problems, so a document of 10⁵ bad trials costs no more than one of 20.
 */
import { isDeepStrictEqual } from 'node:util';
import { checkStudySpec, effectivePrior, type StudySpecInput } from '../studies/study-spec.js';
import { pointer, ValidationError, type FieldError } from '../common/errors.js';
import { MAX_ERRORS } from '../common/schemas.js';
import type { StudyDocument } from './study-document.js';
import { activeParameters, categoryPriors, choiceIndex, searchSpace, toInternal, toUserRaw, vectorFromNamed, type SearchSpace } from '../studies/transforms.js';
import { stepOf } from '../studies/grid.js';
import type { ParamValue } from '../studies/study-request.js';
import { fromRows, getStrategy, Rng, tryCholesky, type BaseState, type Observation, type RngState, type StoredState } from '../../engine/index.js';
import { InlineEngineRunner, type EngineRunner } from '../pool/engine-pool.js';
import { isNearlySymmetric } from '../studies/cholesky.js';
import { userDistribution } from '../studies/distribution.js';
import { ModelHistory, modelOutcomes, objectiveOf, outcomesOf, writeOutcomes, type StudyOutcomes } from '../results/index.js';
import { isStopped } from '../studies/stopping-rule.js';
import { initSpec } from '../studies/engine-ops.js';

/** How deep an engine state may nest (ours are 3–4 levels); bounds the recursive walk. */
const MAX_STATE_DEPTH = 32;

/** Whether the report has its MAX_ERRORS problems: every check stops reading the document then. */
const full = (errors: readonly FieldError[]) => errors.length >= MAX_ERRORS;

const close = (a: number, b: number, rel: number) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));

/** The document's search space; a parameter without a step (an older server's document) has its type's default. */
function documentSpace(s: StudyDocument['study']): SearchSpace {
  return searchSpace(s.parameters.map((p) => (p.type === 'categorical' ? p : { ...p, step: stepOf(p) })), s.prior);
}

/** The study part: a valid specification whose effective prior is the one recorded. */
function checkStudy(doc: StudyDocument, errors: FieldError[]): boolean {
  const s = doc.study;
  const spec: StudySpecInput = {
    name: s.name,
    direction: s.direction,
    parameters: s.parameters.map((p) => (p.type === 'categorical' ? { ...p, prior: { probabilities: [...p.prior.probabilities] } } : { name: p.name, type: p.type, scale: p.scale, bounds: p.bounds, step: p.step, prior: null, condition: p.condition })),
    // The joint prior is over the numeric parameters; a study of categorical ones only has none.
    prior: s.parameters.some((p) => p.type !== 'categorical') ? { mean: s.prior.mean, covariance: s.prior.covariance } : null,
    method: s.method,
    batch_size: s.batch_size,
    options: s.options,
    lease_seconds: s.lease_seconds,
    metadata: s.metadata,
    allow_repeats: s.allow_repeats,
    stopping: s.stopping,
  };
  try {
    checkStudySpec(spec);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    errors.push(...err.errors.map((e) => ({ path: `/study${e.path}`, message: e.message })));
    return false;
  }
  const eff = effectivePrior(spec);
  s.parameters.forEach((p, i) => {
    const e = eff.parameters[i]!;
    if (p.type === 'categorical' || e.type === 'categorical') return; // its probabilities were checked as its prior
    if (!close(p.prior.mean, e.prior.mean, 1e-9) || !close(p.prior.std, e.prior.std, 1e-9)) {
      errors.push({ path: pointer(['study', 'parameters', i, 'prior']), message: 'must be the marginal of the joint prior (mean and √covariance diagonal)' });
    }
  });
  if (s.prior.std.length !== eff.prior.std.length || s.prior.std.some((v, i) => !close(v, eff.prior.std[i]!, 1e-9))) {
    errors.push({ path: '/study/prior/std', message: 'must be the square root of the covariance diagonal' });
  }
  return true;
}

/** The document study's objectives and constraints as the study will store them. */
const storedOutcomes = (s: StudyDocument['study']) =>
  writeOutcomes({
    direction: s.direction,
    objectives: s.objectives ?? null,
    constraints: s.constraints ?? null,
    // Stryker disable next-line LogicalOperator: the reference point is read by no check here (the trials' shape needs the objectives and constraints; the resolved parameters and the history neither)
    reference_point: s.reference_point ?? null,
  });
const documentOutcomes = (s: StudyDocument['study']): StudyOutcomes => outcomesOf({ direction: s.direction, outcomes: storedOutcomes(s) });

/** A trial's result has the study's shape: `values` for several objectives, one per objective; constraint values, one per constraint; nothing beside infeasible. */
function checkResultShape(o: StudyOutcomes, t: StudyDocument['trials'][number], at: (...rest: (string | number)[]) => string, errors: FieldError[]): void {
  const m = o.objectives.length;
  const k = o.constraints.length;
  if (t.infeasible === true) {
    if (t.value !== null || t.values !== undefined || t.constraints !== undefined) errors.push({ path: at('infeasible'), message: 'an infeasible trial has no value, values or constraints' });
    return;
  }
  if (m > 1 && t.value !== null) errors.push({ path: at('value'), message: `the study has ${m} objectives: a trial has \`values\`` });
  if (t.values !== undefined && (m === 1 || t.values.length !== m)) errors.push({ path: at('values'), message: m === 1 ? 'the study has one objective: a trial has `value`' : `needs one value per objective (${m})` });
  const valued = t.value !== null || t.values !== undefined;
  if (t.constraints !== undefined && t.constraints.length !== k) errors.push({ path: at('constraints'), message: `needs one value per constraint (${k})` });
  else if (valued && k > 0 && t.constraints === undefined) errors.push({ path: at('constraints'), message: `missing: the study declares ${k} constraint${k > 1 ? 's' : ''}` });
}

function checkTrials(doc: StudyDocument, errors: FieldError[]): void {
  const outcomes = documentOutcomes(doc.study);
  const s = doc.study;
  const names = s.parameters.map((p) => p.name);
  const space = documentSpace(s);
  const seen = new Set<number>();
  doc.trials.forEach((t, i) => {
    if (full(errors)) return;
    const at = (...rest: (string | number)[]) => pointer(['trials', i, ...rest]);
    if (seen.has(t.trial_id)) errors.push({ path: at('trial_id'), message: 'duplicates another trial\'s id' });
    seen.add(t.trial_id);
    if (t.generation > s.generation) errors.push({ path: at('generation'), message: `is after the study's generation (${s.generation})` });
    const keys = Object.keys(t.parameters);
    // On a conditional space a trial has exactly its active parameters (docs/conditional.md).
    const active = space.conditions ? activeParameters(space, vectorFromNamed(space, t.parameters)) : null;
    const expected = active ? names.filter((_, k) => active[k]) : names;
    if (keys.length !== expected.length || !expected.every((n) => Object.hasOwn(t.parameters, n))) {
      if (!active) errors.push({ path: at('parameters'), message: `must have exactly the study's parameters (${names.join(', ')})` });
      else {
        // Each offending key at its own pointer: what is missing, inactive or unknown.
        for (const k of keys) if (!expected.includes(k)) errors.push({ path: at('parameters', k), message: names.includes(k) ? 'inactive at this trial\'s values (its condition does not hold): leave it out' : 'not a parameter of this study' });
        for (const n of expected) if (!Object.hasOwn(t.parameters, n)) errors.push({ path: at('parameters', n), message: 'missing: active at this trial\'s values, so it needs a value' });
      }
    } else if (!choicesOk(space, t.parameters, at, errors) || !gridsOk(space, t.parameters, at, errors)) {
      // reported per parameter
    } else if (t.point !== null) {
      if (t.point.length !== names.length) errors.push({ path: at('point'), message: `must have ${names.length} coordinates` });
      else {
        // The point is what the engine learns from: it must be the parameters' own coordinates. On a
        // conditional space its inactive coordinates are the engine's own (or neutral values), so the
        // point is read back in user units and compared on the active parameters only.
        if (active) {
          const x = toUserRaw(space, t.point);
          const off = expected.some((n) => { const k = names.indexOf(n); const v = t.parameters[n]!; return typeof v === 'number' ? !close(x[k] as number, v, 1e-6) : x[k] !== v; });
          if (off) errors.push({ path: at('point'), message: 'does not match the parameters (internal coordinates of the point, on the active parameters)' });
        } else {
          const u = toInternal(space, names.map((n) => t.parameters[n]!));
          if (u.some((v, k) => !close(v, t.point![k]!, 1e-6))) errors.push({ path: at('point'), message: 'does not match the parameters (internal coordinates of the point)' });
        }
      }
    }
    const completed = t.state === 'COMPLETED';
    checkResultShape(outcomes, t, at, errors);
    const hasResult = t.value !== null || t.values !== undefined || t.infeasible === true;
    if (completed !== hasResult) errors.push({ path: at('value'), message: completed ? 'a COMPLETED trial needs a value (or values, or infeasible)' : `a ${t.state} trial has no value` });
    if (!completed && t.stderr !== null) errors.push({ path: at('stderr'), message: `a ${t.state} trial has no stderr` });
    if (completed && t.completed_at === null) errors.push({ path: at('completed_at'), message: 'a COMPLETED trial needs completed_at' });
    if (t.late && (!completed || t.source !== 'suggested')) errors.push({ path: at('late'), message: 'only a COMPLETED suggested trial can have a late result' });
    if (t.state === 'ACTIVE' && (t.client_id === null || t.lease_expires_at === null)) {
      errors.push({ path: at(t.client_id === null ? 'client_id' : 'lease_expires_at'), message: 'an ACTIVE trial is leased to a client until a time' });
    }
  });
}

/** A categorical parameter's value is one of its choices (matched by value and JSON type). */
function choicesOk(space: SearchSpace, values: Record<string, ParamValue>, at: (...rest: (string | number)[]) => string, errors: FieldError[]): boolean {
  let ok = true;
  for (const p of space.categorical) {
    if (!Object.hasOwn(values, p.name)) continue; // inactive (the trial's keys were checked first)
    if (choiceIndex(p, values[p.name]!) >= 0) continue;
    errors.push({ path: at('parameters', p.name), message: `must be one of the choices ${JSON.stringify(p.choices)}` });
    ok = false;
  }
  return ok;
}

/**
 * A stepped parameter's value is exactly one of its grid values, as the server hands them out and
 * stores reported ones (no float noise: the repeat check compares values exactly).
 */
function gridsOk(space: SearchSpace, values: Record<string, ParamValue>, at: (...rest: (string | number)[]) => string, errors: FieldError[]): boolean {
  let ok = true;
  space.parameters.forEach((p, i) => {
    const grid = space.grids[i];
    const v = values[p.name];
    if (!grid || typeof v !== 'number') return;
    const k = grid.indexOf(v);
    if (k !== null && grid.value(k) === v) return;
    errors.push({ path: at('parameters', p.name), message: `must be a value of the grid ${grid.low} + k·${grid.step} (nearest: ${grid.neighbours(v).join(' or ')})` });
    ok = false;
  });
  return ok;
}

/** A categorical search distribution: per categorical parameter, probabilities of its choices summing to 1. */
function checkCategorical(space: SearchSpace, q: unknown, at: (...rest: (string | number)[]) => string, errors: FieldError[]): void {
  if (space.categorical.length === 0) {
    // The strategies take their mixed-space path when a state has one: a numeric study's must not.
    errors.push({ path: at('state', 'categorical'), message: 'a study without categorical parameters has no categorical distribution' });
    return;
  }
  const ok = Array.isArray(q) && q.length === space.categorical.length && space.categorical.every((p, j) => {
    const row = q[j] as unknown;
    return Array.isArray(row) && row.length === p.choices.length && row.every((v) => typeof v === 'number' && v >= 0 && v <= 1) && Math.abs(row.reduce((a: number, b: number) => a + b, 0) - 1) <= 1e-6;
  });
  if (!ok) errors.push({ path: at('state', 'categorical'), message: 'must hold, per categorical parameter, the probabilities of its choices (summing to 1)' });
}

/** Intermediate values belong to trials of the document, one per trial and step. */
function checkIntermediate(doc: StudyDocument, errors: FieldError[]): void {
  const trials = new Set(doc.trials.map((t) => t.trial_id));
  const seen = new Set<string>();
  doc.intermediate_values.forEach((r, i) => {
    if (full(errors)) return;
    const key = `${r.trial_id}:${r.step}`;
    if (!trials.has(r.trial_id)) errors.push({ path: pointer(['intermediate_values', i, 'trial_id']), message: 'is not a trial of the document' });
    else if (seen.has(key)) errors.push({ path: pointer(['intermediate_values', i, 'step']), message: `duplicates another value of trial ${r.trial_id} at this step` });
    seen.add(key);
  });
}

/** Every number in a JSON value is finite (JSON text like 1e999 parses to Infinity). */
function walkFinite(v: unknown, path: (string | number)[], depth: number, errors: FieldError[]): void {
  if (full(errors)) return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) errors.push({ path: pointer(path), message: 'must be a finite number' });
  } else if (v !== null && typeof v === 'object') {
    if (depth >= MAX_STATE_DEPTH) {
      errors.push({ path: pointer(path), message: `nests deeper than ${MAX_STATE_DEPTH} levels` });
      return;
    }
    for (const [k, x] of Array.isArray(v) ? v.entries() : Object.entries(v)) walkFinite(x, [...path, k], depth + 1, errors);
  }
}

/**
 * The search distribution of a snapshot must be one: a symmetric positive-definite covariance (the
 * loop samples through its Cholesky factor), and finite in user units (the reports show the mean
 * through exp for log-scaled parameters and L0 Σ L0ᵀ; a finite but huge Σ or mean overflows there).
 * Symmetry is checked loosely (1e-6 relative): the strategies' updates are symmetric only up to rounding.
 */
function checkDistribution(space: SearchSpace, mean: number[], cov: number[][], at: (...rest: (string | number)[]) => string, errors: FieldError[]): void {
  if (!isNearlySymmetric(cov, 1e-6) || !tryCholesky(fromRows(cov))) {
    errors.push({ path: at('state', 'cov'), message: 'must be a symmetric positive-definite matrix' });
    return;
  }
  const u = userDistribution(space, { mean, cov, categorical: categoryPriors(space) });
  if (![...space.numeric.map((p) => u.mean[p.name]), ...u.meanTransformed, ...u.covariance.flat()].every(Number.isFinite)) {
    errors.push({ path: at('state', 'mean'), message: 'the distribution (mean, or covariance in the parameters\' scale) overflows a double in user units' });
  }
}

/** Every strategy draws from the state's generator; one the engine cannot restore breaks every later suggestion. */
function isRngState(v: unknown): boolean {
  const words = (v as Partial<RngState> | null)?.words;
  // All-zero words are xoroshiro's fixed point: it would return 0 forever.
  if (!Array.isArray(words) || !words.every((w) => Number.isInteger(w) && w >= -(2 ** 31) && w < 2 ** 32) || words.every((w) => w === 0)) return false;
  // The kind and the number of words: the generator's own check.
  try {
    Rng.fromState(v as RngState);
    return true;
  } catch {
    return false;
  }
}

/**
 * The parameters the study's method resolves from its options at init (as plain JSON), or null when
 * the options are not this release's (an older release's document: its states carry what that
 * release resolved, read by the strategy's migration).
 */
function resolvedParams(s: StudyDocument['study'], space: SearchSpace): unknown {
  try {
    // With the study's objectives and constraints: the methods resolve some parameters from them (§32).
    const outcomes = documentOutcomes(s);
    const state = getStrategy(s.method).init(initSpec(s.method, s.batch_size, s.options, space, s.max_trials, outcomes), Rng.fromSeed(1));
    return JSON.parse(JSON.stringify(state.params)) as unknown;
  } catch {
    return null;
  }
}

/** The keys whose values differ between two parameter objects (at most five named). */
function differingKeys(a: unknown, b: unknown): string[] {
  const ra = (a ?? {}) as Record<string, unknown>, rb = (b ?? {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].filter((k) => !isDeepStrictEqual(ra[k], rb[k]));
  return keys.length > 5 ? [...keys.slice(0, 5), `${keys.length - 5} more`] : keys;
}

function checkEngineStates(doc: StudyDocument, errors: FieldError[]): void {
  const s = doc.study;
  const space = documentSpace(s);
  // Every state's parameters are resolved once from the options (the strategy's init); a state that
  // carries others (say, a batch selection drawing 10³⁰⁸ candidates) would pass every other check here
  // and then cost far more than the document's size on the first suggestion.
  const params = resolvedParams(s, space);
  // The state's dim counts every coordinate; its mean and cov are over the numeric ones (transforms.ts).
  const dim = s.parameters.length;
  const d = space.numeric.length;
  const generations = new Set<number>();
  const revisions = new Set<number>();
  const isVec = (v: unknown): v is number[] => Array.isArray(v) && v.length === d && v.every((x) => typeof x === 'number');
  const isSquare = (v: unknown): v is number[][] => Array.isArray(v) && v.length === d && v.every(isVec);
  doc.engine_states.forEach((e, i) => {
    if (full(errors)) return;
    const at = (...rest: (string | number)[]) => pointer(['engine_states', i, ...rest]);
    if (generations.has(e.generation)) errors.push({ path: at('generation'), message: 'duplicates another snapshot\'s generation' });
    if (revisions.has(e.revision)) errors.push({ path: at('revision'), message: 'duplicates another snapshot\'s revision' });
    generations.add(e.generation);
    revisions.add(e.revision);
    const st = e.state;
    if (st.generation !== e.generation) errors.push({ path: at('state', 'generation'), message: `must be the snapshot's generation (${e.generation})` });
    if (st.method !== s.method) errors.push({ path: at('state', 'method'), message: `must be the study's method (${s.method})` });
    // The loop stores a new snapshot under the state's own version: it must be the recorded one.
    if (st.version !== e.version) errors.push({ path: at('state', 'version'), message: `must be the snapshot's version (${e.version})` });
    // …and one this server's strategy reads: its own version or an earlier one, which it migrates on
    // load (the loop refuses any other).
    const strategy = getStrategy(s.method);
    if (!(Number.isInteger(e.version) && e.version >= 1 && e.version <= strategy.stateVersion)) {
      errors.push({ path: at('version'), message: `must be a version ${s.method} reads (1 to ${strategy.stateVersion})` });
    } else if (st.version === e.version && st.method === s.method) {
      try {
        const read = JSON.parse(JSON.stringify(strategy.migrate({ ...st, version: e.version, method: s.method }).params ?? null)) as unknown;
        if (params !== null && !isDeepStrictEqual(read, params)) {
          errors.push({ path: at('state', 'params'), message: `must be the parameters ${s.method} resolves from the study's options (${differingKeys(read, params).join(', ')} differ)` });
        }
      } catch (err) {
        errors.push({ path: at('state'), message: `is not a ${s.method} state of version ${e.version}: ${(err as Error).message}` });
      }
    }
    if (st.dim !== dim) errors.push({ path: at('state', 'dim'), message: `must be the number of parameters (${dim})` });
    // The loop sizes each generation from the state's batch size: it is the study's, as init set it.
    if (st.batchSize !== s.batch_size) errors.push({ path: at('state', 'batchSize'), message: `must be the study's batch size (${s.batch_size})` });
    if (st.categorical !== undefined) checkCategorical(space, st.categorical, at, errors);
    if (!isVec(st.mean)) errors.push({ path: at('state', 'mean'), message: `must be ${d} numbers` });
    if (!isRngState(st.rng)) errors.push({ path: at('state', 'rng'), message: 'must be a random generator state: {kind: "xoroshiro128plus", words: four 32-bit integers, not all zero}' });
    const isMatrix = isSquare(st.cov);
    if (!isMatrix) errors.push({ path: at('state', 'cov'), message: `must be a ${d}×${d} matrix` });
    const before = errors.length;
    walkFinite(st, ['engine_states', i, 'state'], 0, errors);
    if (isSquare(st.cov) && isVec(st.mean) && errors.length === before) checkDistribution(space, st.mean, st.cov, at, errors);
  });
  // Later generations were committed later: the loop resumes from the highest revision, which must
  // therefore be the latest generation's.
  const byGeneration = [...doc.engine_states].sort((a, b) => a.generation - b.generation);
  byGeneration.forEach((e, k) => {
    if (full(errors)) return;
    if (k > 0 && e.revision <= byGeneration[k - 1]!.revision) {
      errors.push({ path: pointer(['engine_states', doc.engine_states.indexOf(e), 'revision']), message: 'revisions must increase with the generation' });
    }
  });
  // Every study has an engine state from its creation on; the loop cannot resume without one.
  if (doc.engine_states.length === 0) errors.push({ path: '/engine_states', message: 'must hold at least the initial engine state' });
  // The study's generation is the latest snapshot's: they are written together.
  const latest = doc.engine_states.reduce((m, e) => Math.max(m, e.generation), 0);
  if (latest !== s.generation) errors.push({ path: '/study/generation', message: `must be the latest engine-state generation (${latest})` });
}

/**
 * The fields every strategy shares are checked above; the rest of a state (CMA-ES paths and step
 * size, a GP's hyperparameters, …) only its strategy understands. A consistent document whose
 * latest state the strategy cannot ask from would import as a study whose every suggestion fails,
 * so the strategy is asked once for a generation (and its model for an estimate) with the document's history: any
 * failure or non-finite result rejects the import instead. Both calls go through the engine runner
 * (the server's worker pool), since for a model-based study they fit a GP on the whole history and
 * would otherwise block the event loop for every other request; the runner gets copies of the state.
 */
async function checkResumable(doc: StudyDocument, runner: EngineRunner, errors: FieldError[]): Promise<void> {
  // The latest generation's (one state each: a repeated generation is a problem checkEngineStates reports).
  const k = doc.engine_states.findIndex((e) => e.generation === doc.study.generation);
  // As the loop's engine calls will see them: in completion order (completion time, then trial id),
  // with each reported standard error and stopped trials as results/stopped.ts reads them (a trial
  // without a point is in the median the ones after it are read against, not in the history).
  // Every COMPLETED trial has a result here: checkTrials found no problem.
  const outcomes = modelOutcomes({ direction: doc.study.direction, outcomes: storedOutcomes(doc.study) });
  const history: Observation[] = new ModelHistory(objectiveOf(doc.study), outcomes).all(
    doc.trials
      .filter((t) => t.state === 'COMPLETED')
      .sort((a, b) => (a.completed_at! < b.completed_at! ? -1 : a.completed_at! > b.completed_at! ? 1 : a.trial_id - b.trial_id))
      .map((t) => ({
        point: t.point,
        value: t.value,
        stderr: t.stderr ?? null,
        values: t.values ?? null,
        constraints: t.constraints ?? null,
        infeasible: t.infeasible ?? null,
        stopped: isStopped({ state: t.state, failureReason: t.failure_reason }),
      })),
  );
  const method = doc.study.method;
  // As the loop will read it: through the strategy's migration (a state of an earlier release).
  const state = (): BaseState => getStrategy(method).migrate(structuredClone(doc.engine_states[k]!.state) as unknown as StoredState);
  let problem: string | null = null;
  try {
    // A whole generation, as the loop's first suggestion asks: a single point would be only the mean
    // for the ProbNES methods and leave the batch selection (and its parameters) untried.
    const asked = await runner.run({ op: 'ask', method, state: state(), ctx: { history, pending: [] }, count: doc.study.batch_size });
    if (asked.result.op !== 'ask') throw new Error(`engine answered ${asked.result.op} to ask`);
    const { points } = asked.result;
    if (!points.every((p) => p.length === doc.study.parameters.length && p.every(Number.isFinite))) problem = 'it yields non-finite points';
    // /best asks the model for its prediction at the mean: that must not fail on the state either.
    const estimated = await runner.run({ op: 'estimate', method, state: state(), history });
    if (estimated.result.op !== 'estimate') throw new Error(`engine answered ${estimated.result.op} to estimate`);
    const est = estimated.result.estimate;
    if ([est.predicted, est.predicted_std].some((v) => v !== null && !Number.isFinite(v))) problem = 'its model predicts non-finite values';
  } catch (err) {
    problem = err instanceof Error ? err.message : String(err);
  }
  if (problem !== null) errors.push({ path: pointer(['engine_states', k, 'state']), message: `the optimiser cannot resume from this state (${problem})` });
}

/** Throws ValidationError listing every inconsistency of a structurally valid document. */
export async function checkDocument(doc: StudyDocument, runner: EngineRunner = new InlineEngineRunner()): Promise<void> {
  const errors: FieldError[] = [];
  if (checkStudy(doc, errors)) {
    checkTrials(doc, errors);
    checkIntermediate(doc, errors);
    checkEngineStates(doc, errors);
    if (errors.length === 0) await checkResumable(doc, runner, errors);
  }
  if (errors.length > 0) throw new ValidationError(errors.slice(0, MAX_ERRORS));
}
