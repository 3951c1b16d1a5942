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
 */
import { fromRows, getStrategy, tryCholesky } from '../../engine/index.js';
import { isNearlySymmetric, isPositiveDefinite } from './cholesky.js';
import { pointer, ValidationError, type FieldError } from '../common/errors.js';
import type { CreateStudyInput, ParameterInput, PriorSource } from './study-request.js';

export type ParameterType = 'float' | 'int';
export type Scale = 'linear' | 'log';

/** A joint prior typed in or fitted: mean and covariance in the transformed scale. */
export interface JointPriorInput {
  mean: number[];
  covariance: number[][];
}

/** The create request once its prior is a joint prior (prior-sources.ts resolves the fitted forms). */
export type StudySpecInput = Omit<CreateStudyInput, 'prior'> & { prior?: JointPriorInput | null };

/** A parameter as stored and returned: its effective marginal prior filled in. */
export interface ParameterSpec {
  name: string;
  type: ParameterType;
  scale: Scale;
  bounds: [number, number] | null;
  prior: { mean: number; std: number };
}

/** The effective prior in transformed scale (see header), in the order of `parameters`. */
export interface EffectivePrior {
  mean: number[];
  covariance: number[][];
  std: number[];
  /** Present when the prior was fitted to data (`from_points`, `from_study`): what it was fitted to. */
  source?: PriorSource;
}

/** Methods whose update ranks the points of a generation need at least two of them. */
const transform = (scale: Scale, x: number) => (scale === 'log' ? Math.log(x) : x);

function checkParameter(p: ParameterInput, i: number, errors: FieldError[]): void {
  const at = (...rest: (string | number)[]) => pointer(['parameters', i, ...rest]);
  if (p.bounds) {
    const [lo, hi] = p.bounds;
    if (!(lo < hi)) errors.push({ path: at('bounds'), message: 'bounds must be ordered [low, high] with low < high' });
    if (p.scale === 'log' && !(lo > 0)) errors.push({ path: at('bounds', 0), message: 'a log-scaled parameter needs bounds > 0' });
    if (p.type === 'int' && !(Number.isInteger(lo) && Number.isInteger(hi))) errors.push({ path: at('bounds'), message: 'an int parameter needs integer bounds' });
  }
  if (p.prior && p.bounds && p.bounds[0] < p.bounds[1] && (p.scale === 'linear' || p.bounds[0] > 0)) {
    const lo = transform(p.scale, p.bounds[0]);
    const hi = transform(p.scale, p.bounds[1]);
    if (p.prior.mean < lo || p.prior.mean > hi) {
      const unit = p.scale === 'log' ? ' (the mean of a log-scaled parameter is of ln(value))' : '';
      errors.push({ path: at('prior', 'mean'), message: `prior mean must lie within the bounds, [${lo}, ${hi}]${unit}` });
    }
  }
}

function checkJoint(prior: JointPriorInput, params: ParameterInput[], errors: FieldError[]): void {
  const d = params.length;
  if (prior.mean.length !== d) errors.push({ path: '/prior/mean', message: `must have one entry per parameter (${d})` });
  if (prior.covariance.length !== d || prior.covariance.some((r) => r.length !== d)) {
    errors.push({ path: '/prior/covariance', message: `must be a ${d}×${d} matrix, in the order of parameters` });
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
  if (input.prior) {
    input.parameters.forEach((p, i) => {
      if (p.prior) errors.push({ path: pointer(['parameters', i, 'prior']), message: 'give per-parameter priors or the joint `prior`, not both' });
    });
    checkJoint(input.prior, input.parameters, errors);
  } else {
    input.parameters.forEach((p, i) => {
      if (!p.prior && !p.bounds) errors.push({ path: pointer(['parameters', i, 'prior']), message: 'a parameter without bounds needs a prior (or give the joint `prior`)' });
    });
  }
  const minBatch = getStrategy(input.method).minBatch;
  if (input.batch_size < minBatch) {
    // A minimum above 1 is always a ranking's: one point alone carries no ranking.
    errors.push({ path: '/batch_size', message: `${input.method} ranks the points of a generation and needs batch_size ≥ ${minBatch}` });
  }
  if (errors.length === 0) checkEffective(input, errors);
  if (errors.length > 0) throw new ValidationError(errors);
}

/**
 * Finite inputs can still give an unusable prior: a std whose square overflows (1e200) or
 * underflows to 0 (1e-170), bounds whose width or midpoint overflows ([-1e308, 1e308]), a joint
 * covariance whose symmetrised entries overflow. The engine would then start from ±Infinity or a
 * singular factor, so the effective prior must be finite with positive variances and factorise.
 */
function checkEffective(input: StudySpecInput, errors: FieldError[]): void {
  const { prior } = effectivePrior(input);
  const where = (i: number, what: 'mean' | 'std'): string => {
    const p = input.parameters[i]!;
    if (input.prior) return what === 'mean' ? pointer(['prior', 'mean', i]) : pointer(['prior', 'covariance', i, i]);
    return p.prior ? pointer(['parameters', i, 'prior', what]) : pointer(['parameters', i, 'bounds']);
  };
  const before = errors.length;
  input.parameters.forEach((_, i) => {
    if (!Number.isFinite(prior.mean[i]!)) errors.push({ path: where(i, 'mean'), message: 'the prior mean (the middle of the bounds, when derived) overflows a double' });
    const v = prior.covariance[i]![i]!;
    if (!(Number.isFinite(v) && v > 0)) {
      errors.push({ path: where(i, 'std'), message: 'the prior variance (std², from the bounds\' width when derived) must be a positive finite double: std within about [1e-154, 1e154]' });
    }
  });
  if (errors.length > before) return;
  if (prior.covariance.some((row) => row.some((x) => !Number.isFinite(x)))) {
    errors.push({ path: '/prior/covariance', message: 'entries overflow a double once symmetrised' });
  } else if (!tryCholesky(fromRows(prior.covariance))) {
    errors.push({ path: input.prior ? '/prior/covariance' : '/parameters', message: 'the prior covariance is numerically singular' });
  }
}

/** The effective prior and per-parameter specs; call after `checkStudySpec`. */
export function effectivePrior(input: StudySpecInput): { parameters: ParameterSpec[]; prior: EffectivePrior } {
  const d = input.parameters.length;
  let mean: number[];
  let covariance: number[][];
  if (input.prior) {
    mean = [...input.prior.mean];
    covariance = symmetrise(input.prior.covariance);
  } else {
    const marginals = input.parameters.map((p) => {
      if (p.prior) return p.prior;
      const lo = transform(p.scale, p.bounds![0]);
      const hi = transform(p.scale, p.bounds![1]);
      return { mean: (lo + hi) / 2, std: (hi - lo) / 4 };
    });
    mean = marginals.map((m) => m.mean);
    covariance = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? marginals[i]!.std ** 2 : 0)));
  }
  const std = covariance.map((row, i) => Math.sqrt(row[i]!));
  const parameters = input.parameters.map((p, i) => ({
    name: p.name,
    type: p.type,
    scale: p.scale,
    bounds: p.bounds ? ([p.bounds[0], p.bounds[1]] as [number, number]) : null,
    prior: { mean: mean[i]!, std: std[i]! },
  }));
  return { parameters, prior: { mean, covariance, std } };
}
