/**
 * A study's specification: the checks that span several fields (bounds against priors, the joint
 * covariance, batch size against the method) and the effective prior.
 *
 * Scales: for `scale: "log"` a parameter's prior (mean, std, covariance entries) is of ln(value);
 * bounds stay in user units. "Transformed" below means that scale: T(x) = x or ln x.
 *
 * Default prior, when a parameter has none (and no joint prior is given): a normal centred on the
 * middle of its transformed bounds with std = (transformed width)/4, so the bounds sit at ±2σ
 * (95% of the prior mass inside the box). A parameter without bounds must have a prior.
 *
 * Categorical parameters (`type: "categorical"`) have a prior over their choices (uniform by
 * default) instead of a normal one. The joint prior and the effective prior's mean and covariance
 * are over the numeric parameters only, in their order among `parameters` (categorical ones
 * skipped). Only the methods whose strategy declares `categorical` accept them.
 */
import { getStrategy, METHOD_NAMES, type MethodName } from '../../engine/index.js';
import { isNearlySymmetric, isPositiveDefinite } from './cholesky.js';
import { pointer, ValidationError, type FieldError } from '../common/errors.js';
import type { CategoricalParameterInput, Choice, CreateStudyInput, NumericParameterInput, ParameterInput, PriorSource } from './study-request.js';
import { Grid, MIN_STEP_RATIO, stepOf } from './grid.js';

export type ParameterType = 'float' | 'int' | 'categorical';
export type Scale = 'linear' | 'log';

/** A joint prior typed in or fitted: mean and covariance in the transformed scale. */
export interface JointPriorInput {
  mean: number[];
  covariance: number[][];
}

/** The create request once its prior is a joint prior (prior-sources.ts resolves the fitted forms). */
export type StudySpecInput = Omit<CreateStudyInput, 'prior'> & { prior?: JointPriorInput | null };

/** A conditional parameter's condition, as given: active while `parent` is active and takes one of `values`. */
export interface ConditionSpec {
  parent: string;
  values: Choice[];
}

/** A numeric parameter as stored and returned: its effective marginal prior filled in. */
export interface NumericParameterSpec {
  name: string;
  type: 'float' | 'int';
  scale: Scale;
  bounds: [number, number] | null;
  /**
   * Values are low + k·step (grid.ts): 1 for an int parameter unless given, null for a continuous
   * float. (Studies stored before steps existed have none; codec.ts reads them with these defaults.)
   */
  step: number | null;
  prior: { mean: number; std: number };
  /** Present only on a conditional parameter (docs/conditional.md); studies without conditions store none. */
  condition?: ConditionSpec;
}

/** A categorical parameter as stored and returned: its prior over the choices filled in. */
export interface CategoricalParameterSpec {
  name: string;
  type: 'categorical';
  choices: Choice[];
  prior: { probabilities: number[] };
  condition?: ConditionSpec;
}

export type ParameterSpec = NumericParameterSpec | CategoricalParameterSpec;

export const isCategorical = <P extends { type: string }>(p: P): p is Extract<P, { type: 'categorical' }> => p.type === 'categorical';
export const isNumeric = <P extends { type: string }>(p: P): p is Exclude<P, { type: 'categorical' }> => p.type !== 'categorical';

/** The methods that accept categorical parameters, hence conditional ones (their strategies declare `categorical`; GET /v1/methods reports it). */
export function categoricalMethods(): MethodName[] {
  return METHOD_NAMES.filter((m) => getStrategy(m).categorical === true);
}

/** Tolerance on Σ probabilities = 1 for a categorical prior (then normalised exactly). */
const PROBABILITY_SUM_TOLERANCE = 1e-6;

/** The effective prior in transformed scale (see header), in the order of `parameters`. */
export interface EffectivePrior {
  mean: number[];
  covariance: number[][];
  std: number[];
  /** Present when the prior was fitted to data (`from_points`, `from_study`): what it was fitted to. */
  source?: PriorSource;
}

const transform = (scale: Scale, x: number) => (scale === 'log' ? Math.log(x) : x);

/** Choices are matched by value and JSON type, so 1 and "1" are two different choices. */
const choiceKey = (c: Choice) => `${typeof c}:${String(c)}`;

function checkCategorical(p: CategoricalParameterInput, i: number, errors: FieldError[]): void {
  const at = (...rest: (string | number)[]) => pointer(['parameters', i, ...rest]);
  const seen = new Map<string, number>();
  p.choices.forEach((c, k) => {
    const first = seen.get(choiceKey(c));
    if (first !== undefined) errors.push({ path: at('choices', k), message: `duplicates choice ${first}: choices must be distinct` });
    else seen.set(choiceKey(c), k);
  });
  const probs = p.prior?.probabilities;
  if (!probs) return;
  if (probs.length !== p.choices.length) {
    errors.push({ path: at('prior', 'probabilities'), message: `must have one probability per choice (${p.choices.length}), got ${probs.length}` });
    return;
  }
  const sum = probs.reduce((a, b) => a + b, 0);
  if (!(Math.abs(sum - 1) <= PROBABILITY_SUM_TOLERANCE)) errors.push({ path: at('prior', 'probabilities'), message: `must sum to 1 (to ${PROBABILITY_SUM_TOLERANCE}), got ${sum}` });
}

function checkParameter(p: ParameterInput, i: number, errors: FieldError[]): void {
  if (isCategorical(p)) return checkCategorical(p, i, errors);
  const at = (...rest: (string | number)[]) => pointer(['parameters', i, ...rest]);
  if (p.bounds) {
    const [lo, hi] = p.bounds;
    if (!(lo < hi)) errors.push({ path: at('bounds'), message: 'bounds must be ordered [low, high] with low < high' });
    if (p.scale === 'log' && !(lo > 0)) errors.push({ path: at('bounds', 0), message: 'a log-scaled parameter needs bounds > 0' });
    if (p.type === 'int' && !(Number.isInteger(lo) && Number.isInteger(hi))) errors.push({ path: at('bounds'), message: 'an int parameter needs integer bounds' });
  }
  checkStep(p, at, errors);
  if (p.prior && p.bounds && p.bounds[0] < p.bounds[1] && (p.scale === 'linear' || p.bounds[0] > 0)) {
    const lo = transform(p.scale, p.bounds[0]);
    const hi = transform(p.scale, p.bounds[1]);
    if (p.prior.mean < lo || p.prior.mean > hi) {
      const unit = p.scale === 'log' ? ' (the mean of a log-scaled parameter is of ln(value))' : '';
      errors.push({ path: at('prior', 'mean'), message: `prior mean must lie within the bounds, [${lo}, ${hi}]${unit}` });
    }
  }
}

/**
 * `step` (Optuna's): values low + k·step. As in Optuna it does not combine with a log scale (the
 * grid is even in the value, the search in ln(value)), an int's step is an integer, and it needs
 * bounds (the grid starts at low). A high off the grid is rounded down at creation (alignToGrid), so
 * a stored study's high is always a grid value; an imported document's must be too.
 */
function checkStep(p: NumericParameterInput, at: (...rest: (string | number)[]) => string, errors: FieldError[]): void {
  if (p.step === undefined || p.step === null) return;
  const step = p.step;
  const plain = p.type === 'int' && step === 1; // the default: what every int parameter has
  if (p.scale === 'log' && !plain) {
    errors.push({ path: at('step'), message: p.type === 'int' ? 'a log-scaled int parameter takes no step other than 1 (as in Optuna): leave out step or scale' : 'a log-scaled parameter takes no step (as in Optuna): its search is continuous in ln(value); leave out step or scale' });
    return;
  }
  if (p.type === 'int' && !Number.isInteger(step)) {
    errors.push({ path: at('step'), message: 'an int parameter\'s step must be an integer' });
    return;
  }
  if (plain) return;
  if (!p.bounds) {
    errors.push({ path: at('step'), message: 'a stepped parameter needs bounds: its values are low + k·step' });
    return;
  }
  const [lo, hi] = p.bounds;
  if (!(lo < hi && Number.isFinite(lo) && Number.isFinite(hi))) return; // reported at bounds (or as the prior's overflow)
  const finest = MIN_STEP_RATIO * Math.max(Math.abs(lo), Math.abs(hi));
  if (step < finest) {
    errors.push({ path: at('step'), message: `must be at least ${finest} (${MIN_STEP_RATIO} × max(|low|, |high|)): a finer grid has more values than doubles tell apart at these bounds; leave out step for a continuous parameter` });
    return;
  }
  // In decimal (grid.ts): [0.1, 0.3] with step 0.2 has two values although 0.3 − 0.1 < 0.2 in binary.
  const grid = new Grid(lo, hi, step);
  if (grid.last < 1) {
    errors.push({ path: at('step'), message: `must be at most high − low (${hi} − ${lo}), so that the grid has at least two values` });
    return;
  }
  if (grid.high !== hi) errors.push({ path: at('bounds', 1), message: `must be a value of the grid low + k·step: the last one of these bounds is ${grid.high}` });
}

/** Whether checkStep accepts the step of a parameter with these bounds (the high aside). */
export function usableStep(p: NumericParameterInput): p is NumericParameterInput & { bounds: [number, number]; step: number } {
  if (!p.bounds || p.step === undefined || p.step === null || p.scale === 'log') return false;
  const [lo, hi] = p.bounds;
  const step = p.step;
  if (p.type === 'int' && !(Number.isInteger(step) && Number.isInteger(lo) && Number.isInteger(hi))) return false;
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo < hi && step > 0 && step >= MIN_STEP_RATIO * Math.max(Math.abs(lo), Math.abs(hi)))) return false;
  return new Grid(lo, hi, step).last >= 1;
}

/**
 * Optuna's rule for a high off the grid: it becomes the last grid value below it (Optuna warns;
 * here the study resource echoes the bounds it searches). Run at creation, before the other checks;
 * a step they refuse is left as it is for them to report.
 */
export function alignToGrid<T extends { parameters: ParameterInput[] }>(input: T): T {
  if (!input.parameters.some((p) => isNumeric(p) && usableStep(p))) return input;
  const parameters = input.parameters.map((p) => {
    if (!isNumeric(p) || !usableStep(p)) return p;
    const high = new Grid(p.bounds[0], p.bounds[1], p.step).high;
    return high === p.bounds[1] ? p : { ...p, bounds: [p.bounds[0], high] as [number, number] };
  });
  return { ...input, parameters };
}

function checkJoint(prior: JointPriorInput, all: ParameterInput[], errors: FieldError[]): void {
  const params = all.filter(isNumeric);
  const d = params.length;
  const which = params.length === all.length ? 'parameter' : 'numeric parameter (categorical ones have their own prior)';
  if (prior.mean.length !== d) errors.push({ path: '/prior/mean', message: `must have one entry per ${which} (${d})` });
  if (prior.covariance.length !== d || prior.covariance.some((r) => r.length !== d)) {
    errors.push({ path: '/prior/covariance', message: `must be a ${d}×${d} matrix, in the order of the numeric parameters` });
    return;
  }
  if (!isNearlySymmetric(prior.covariance)) {
    errors.push({ path: '/prior/covariance', message: 'must be symmetric (to a relative tolerance of 1e-8)' });
    return;
  }
  if (!isPositiveDefinite(symmetrise(prior.covariance))) errors.push({ path: '/prior/covariance', message: 'must be positive definite' });
  if (prior.mean.length !== d) return;
  params.forEach((p, i) => {
    if (!p.bounds || !(p.bounds[0] < p.bounds[1]) || (p.scale === 'log' && !(p.bounds[0] > 0))) return;
    const lo = transform(p.scale, p.bounds[0]);
    const hi = transform(p.scale, p.bounds[1]);
    const m = prior.mean[i]!;
    if (m < lo || m > hi) errors.push({ path: pointer(['prior', 'mean', i]), message: `must lie within the bounds of ${p.name}, [${lo}, ${hi}]` });
  });
}

function symmetrise(a: number[][]): number[][] {
  return a.map((row, i) => row.map((v, j) => (v + a[j]![i]!) / 2));
}

/** Validate what spans fields; throws ValidationError listing every problem found. */
export function checkStudySpec(input: StudySpecInput): void {
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  input.parameters.forEach((p, i) => {
    const first = seen.get(p.name);
    if (first !== undefined) errors.push({ path: pointer(['parameters', i, 'name']), message: `duplicates the name of parameter ${first}` });
    else seen.set(p.name, i);
    checkParameter(p, i, errors);
  });
  const numeric = input.parameters.filter(isNumeric);
  if (input.prior && numeric.length === 0) {
    errors.push({ path: '/prior', message: 'a joint prior is over the numeric parameters, and this study has none' });
  } else if (input.prior) {
    input.parameters.forEach((p, i) => {
      if (p.prior && isNumeric(p)) errors.push({ path: pointer(['parameters', i, 'prior']), message: 'give per-parameter priors or the joint `prior`, not both' });
    });
    checkJoint(input.prior, input.parameters, errors);
  } else {
    input.parameters.forEach((p, i) => {
      if (isNumeric(p) && !p.prior && !p.bounds) errors.push({ path: pointer(['parameters', i, 'prior']), message: 'a parameter without bounds needs a prior (or give the joint `prior`)' });
    });
  }
  const minBatch = getStrategy(input.method).minBatch;
  if (input.batch_size < minBatch) {
    // A minimum above 1 is always a ranking's: one point alone carries no ranking.
    errors.push({ path: '/batch_size', message: `${input.method} ranks the points of a generation and needs batch_size ≥ ${minBatch}` });
  }
  checkConditions(input.parameters, errors);
  checkMethodSupport(input, errors);
  if (errors.length === 0) checkEffective(input, errors);
  if (errors.length > 0) throw new ValidationError(errors);
}

/**
 * Conditions (docs/conditional.md): the parent is another parameter of the study, categorical (an
 * int parent is declared as a categorical one with its values as choices, as in Ax: then which
 * parameters are active is read off a choice, exactly, by the server and the engine alike), every
 * value is one of its choices, once, and following parents from any parameter never comes back to it.
 */
function checkConditions(params: readonly ParameterInput[], errors: FieldError[]): void {
  const byName = new Map(params.map((p, i) => [p.name, i] as const));
  const parentOf = new Map<number, number>();
  params.forEach((p, i) => {
    const c = p.condition;
    if (!c) return;
    const at = (...rest: (string | number)[]) => pointer(['parameters', i, 'condition', ...rest]);
    const j = byName.get(c.parent);
    if (j === undefined) return void errors.push({ path: at('parent'), message: `no parameter of this study is named ${JSON.stringify(c.parent)}` });
    if (j === i) return void errors.push({ path: at('parent'), message: 'a parameter cannot be its own parent' });
    const parent = params[j]!;
    if (!isCategorical(parent)) {
      return void errors.push({ path: at('parent'), message: `must name a categorical parameter; ${parent.name} is ${parent.type} (declare it categorical with its values as choices to condition on it)` });
    }
    parentOf.set(i, j);
    const seen = new Map<string, number>();
    c.values.forEach((v, k) => {
      const first = seen.get(choiceKey(v));
      if (first !== undefined) errors.push({ path: at('values', k), message: `duplicates value ${first}` });
      else if (!parent.choices.some((ch) => choiceKey(ch) === choiceKey(v))) {
        errors.push({ path: at('values', k), message: `${JSON.stringify(v)} is not a choice of ${parent.name} (${JSON.stringify(parent.choices)}; matched by value and JSON type)` });
      }
      seen.set(choiceKey(v), k);
    });
  });
  // A cycle: from i, following parents comes back to i. Reported once, at the cycle's first parameter.
  const reported = new Set<number>();
  for (const i of parentOf.keys()) {
    const path = [i];
    for (let j = parentOf.get(i); j !== undefined && path.length <= params.length; j = parentOf.get(j)) {
      if (j === i) {
        if (!path.some((k) => reported.has(k))) errors.push({ path: pointer(['parameters', i, 'condition', 'parent']), message: `conditions form a cycle: ${[...path, i].map((k) => params[k]!.name).join(' → ')}` });
        path.forEach((k) => reported.add(k));
        break;
      }
      path.push(j);
    }
  }
}

/** A method that cannot search categorical parameters refuses them, naming the methods that can. */
function checkMethodSupport(input: StudySpecInput, errors: FieldError[]): void {
  if (getStrategy(input.method).categorical === true) return;
  const first = input.parameters.findIndex(isCategorical);
  if (first < 0) return;
  errors.push({
    path: '/method',
    message: `${input.method} does not support categorical parameters (parameter ${first}, ${input.parameters[first]!.name}, is one); methods that do: ${categoricalMethods().join(', ')}`,
  });
}

/**
 * Finite inputs can still give an unusable prior: a std whose square overflows (1e200) or
 * underflows to 0 (1e-170), bounds whose width or midpoint overflows ([-1e308, 1e308]). The engine
 * would then start from ±Infinity or a zero variance, so each parameter's effective mean must be
 * finite and its variance positive and finite. A joint prior (typed in or fitted) passed checkJoint
 * before this runs: its symmetrised covariance is positive definite, so its variances are positive
 * and finite, and its mean is finite (the request's numbers are). The per-parameter covariance is
 * diagonal, and a diagonal of positive finite variances always factorises.
 */
function checkEffective(input: StudySpecInput, errors: FieldError[]): void {
  if (input.prior) return;
  const { prior } = effectivePrior(input);
  // i: index among the numeric parameters (the prior's order); at[i]: its index among all parameters.
  const at = numericIndices(input.parameters);
  const where = (i: number, what: 'mean' | 'std'): string => {
    const p = input.parameters[at[i]!]! as NumericParameterInput;
    return p.prior ? pointer(['parameters', at[i]!, 'prior', what]) : pointer(['parameters', at[i]!, 'bounds']);
  };
  at.forEach((_, i) => {
    if (!Number.isFinite(prior.mean[i]!)) errors.push({ path: where(i, 'mean'), message: 'the prior mean (the middle of the bounds, when derived) overflows a double' });
    const v = prior.covariance[i]![i]!;
    if (!(Number.isFinite(v) && v > 0)) {
      errors.push({ path: where(i, 'std'), message: 'the prior variance (std², from the bounds\' width when derived) must be a positive finite double: std within about [1e-154, 1e154]' });
    }
  });
}

/** Indices, among all parameters, of the numeric ones (the order of the prior's mean and covariance). */
export function numericIndices(params: readonly { type: string }[]): number[] {
  return params.flatMap((p, i) => (isNumeric(p) ? [i] : []));
}

/** The categorical prior: the given probabilities normalised to sum to 1 exactly, or uniform. */
function choiceProbabilities(p: CategoricalParameterInput): number[] {
  const given = p.prior?.probabilities;
  if (!given) return p.choices.map(() => 1 / p.choices.length);
  const sum = given.reduce((a, b) => a + b, 0);
  return given.map((v) => v / sum);
}

/** The effective prior and per-parameter specs; call after `checkStudySpec`. */
export function effectivePrior(input: StudySpecInput): { parameters: ParameterSpec[]; prior: EffectivePrior } {
  const numeric = input.parameters.filter(isNumeric);
  const d = numeric.length;
  let mean: number[];
  let covariance: number[][];
  if (input.prior) {
    mean = [...input.prior.mean];
    covariance = symmetrise(input.prior.covariance);
  } else {
    const marginals = numeric.map((p) => {
      if (p.prior) return p.prior;
      const lo = transform(p.scale, p.bounds![0]);
      const hi = transform(p.scale, p.bounds![1]);
      return { mean: (lo + hi) / 2, std: (hi - lo) / 4 };
    });
    mean = marginals.map((m) => m.mean);
    covariance = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? marginals[i]!.std ** 2 : 0)));
  }
  const std = covariance.map((row, i) => Math.sqrt(row[i]!));
  let k = 0;
  const parameters = input.parameters.map((p): ParameterSpec => {
    // Only a conditional parameter carries `condition`: the others are stored exactly as before.
    const condition = p.condition ? { condition: { parent: p.condition.parent, values: [...p.condition.values] } } : {};
    if (isCategorical(p)) return { name: p.name, type: 'categorical', choices: [...p.choices], prior: { probabilities: choiceProbabilities(p) }, ...condition };
    const i = k++;
    return {
      name: p.name,
      type: p.type,
      scale: p.scale,
      bounds: p.bounds ? ([p.bounds[0], p.bounds[1]] as [number, number]) : null,
      step: stepOf(p),
      prior: { mean: mean[i]!, std: std[i]! },
      ...condition,
    };
  });
  return { parameters, prior: { mean, covariance, std } };
}
