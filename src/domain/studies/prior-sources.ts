/**
 * The data-informed forms of a study's `prior`: `from_points` and `from_study`. Each is turned into
 * a joint {mean, covariance} (transformed scale) before the usual checks of study-spec.ts run, and
 * leaves a `source` record that is stored with the effective prior and echoed in the resource.
 */
import type { TrialRecord } from '../../storage/index.js';
import { pointer, ValidationError, type FieldError } from '../common/errors.js';
import type { Direction } from './codec.js';
import { ModelHistory, objectiveOf } from '../results/index.js';
import { isStopped } from './stopping-rule.js';
import { shrunkFit, warmStartFit } from './prior-fit.js';
import { gridOf } from './grid.js';
import { isCategorical, usableStep, type JointPriorInput, type NumericParameterSpec, type ParameterSpec } from './study-spec.js';
import type { CreateStudyInput, NumericParameterInput, PriorInput, PriorSource } from './study-request.js';

/** The `from_study` form of the request's prior. */
export type FromStudy = NonNullable<PriorInput['from_study']>;

const T = (p: { scale: string }, x: number) => (p.scale === 'log' ? Math.log(x) : x);

/**
 * Per-parameter unit for the fits (prior-fit.ts's D): the transformed width of the bounds, or for a
 * parameter without bounds `fallback(j)` (the data's own spread).
 */
function scaleOf(params: readonly NumericParameterInput[], fallback: (j: number) => number): number[] {
  return params.map((p, j) => {
    if (p.bounds && p.bounds[0] < p.bounds[1] && (p.scale === 'linear' || p.bounds[0] > 0)) return T(p, p.bounds[1]) - T(p, p.bounds[0]);
    const f = fallback(j);
    return f > 0 && Number.isFinite(f) ? f : 1;
  });
}

const spread = (x: readonly number[][], j: number) => {
  const v = x.map((r) => r[j]!);
  return Math.max(...v) - Math.min(...v) || Math.max(1, Math.abs(v[0]!));
};

function inBounds(p: NumericParameterInput, v: number): boolean {
  if (p.scale === 'log' && !(v > 0)) return false;
  return !p.bounds || (v >= p.bounds[0] && v <= p.bounds[1]);
}

/**
 * A value this study could have handed out: in its bounds, an integer for an int parameter and on
 * the grid for a stepped one (the source's values may be continuous, or on another grid). Only
 * such observations are copied: a study's trials are always values of its own space.
 */
function inSpace(p: NumericParameterInput, v: number): boolean {
  if (!inBounds(p, v)) return false;
  if (p.type === 'int' && !Number.isInteger(v)) return false;
  // Before the specification's checks: a step they will refuse (say, 1e-300) has no grid to build.
  const grid = usableStep(p) ? gridOf(p) : null;
  return !grid || grid.indexOf(v) !== null;
}

/**
 * The fitted priors are Gaussian fits over every parameter; a study with categorical parameters
 * gives its choices' priors per parameter and its numeric ones a typed-in prior instead.
 */
function numericOnly(input: CreateStudyInput, form: string): NumericParameterInput[] {
  const errors: FieldError[] = [];
  input.parameters.forEach((p, i) => {
    if (isCategorical(p)) errors.push({ path: pointer(['parameters', i, 'type']), message: `\`prior.${form}\` fits a Gaussian to numeric parameters only; give this categorical parameter's prior in its own \`prior.probabilities\`, and the others' as per-parameter or joint {mean, covariance} priors` });
  });
  if (errors.length > 0) throw new ValidationError(errors);
  return input.parameters as NumericParameterInput[];
}

/** `from_points` (with its optional `weights`): every problem at its JSON pointer, then the shrunk fit (prior-fit.ts). */
export function resolveFromPoints(input: CreateStudyInput, pts: Record<string, number>[], weights: number[] | undefined): { prior: JointPriorInput; source: PriorSource } {
  const errors: FieldError[] = [];
  const params = numericOnly(input, 'from_points');
  const names = new Set(params.map((p) => p.name));
  if (pts.length < 2) errors.push({ path: '/prior/from_points', message: `give at least 2 points (got ${pts.length})` });
  pts.forEach((pt, k) => {
    for (const name of Object.keys(pt)) {
      if (!names.has(name)) errors.push({ path: pointer(['prior', 'from_points', k, name]), message: 'not a parameter of this study' });
    }
    params.forEach((p) => {
      const v = pt[p.name];
      const at = pointer(['prior', 'from_points', k, p.name]);
      if (v === undefined) errors.push({ path: pointer(['prior', 'from_points', k]), message: `missing parameter ${p.name}` });
      else if (typeof v !== 'number' || !Number.isFinite(v)) errors.push({ path: at, message: 'must be a finite number' });
      else if (!inBounds(p, v)) errors.push({ path: at, message: p.bounds ? `must lie within the bounds [${p.bounds[0]}, ${p.bounds[1]}]` : 'must be > 0 (log scale)' });
    });
  });
  const w = weights ?? pts.map(() => 1);
  if (weights) {
    if (weights.length !== pts.length) errors.push({ path: '/prior/weights', message: `must have one weight per point (${pts.length}), got ${weights.length}` });
    weights.forEach((v, k) => {
      if (!(Number.isFinite(v) && v > 0)) errors.push({ path: pointer(['prior', 'weights', k]), message: 'must be a positive finite number' });
    });
  }
  for (const [i, p] of params.entries()) {
    if (p.prior) errors.push({ path: pointer(['parameters', i, 'prior']), message: 'give per-parameter priors or `prior.from_points`, not both' });
  }
  if (errors.length > 0) throw new ValidationError(errors);
  const x = pts.map((pt) => params.map((p) => T(p, pt[p.name]!)));
  const fit = shrunkFit(x, w, scaleOf(params, (j) => spread(x, j)));
  if (!fit || fit.covariance.some((r) => r.some((v) => !Number.isFinite(v)))) {
    // No fit: either no spread at all, or a spread whose squares overflow a double (points 1e200
    // apart: in the unit-scaled space, or when the covariance is scaled back).
    const equal = x.every((r) => r.every((v, j) => v === x[0]![j]));
    const message = equal ? 'the points are all equal: they give no spread to fit a covariance to' : 'the points are too far apart: their covariance overflows a double (in each parameter\'s transformed scale)';
    throw new ValidationError([{ path: '/prior/from_points', message }]);
  }
  return { prior: { mean: fit.mean, covariance: fit.covariance }, source: { from: 'points', points: pts.length, shrinkage: fit.shrinkage } };
}

/** The source study as the warm start needs it. */
export interface SourceStudy {
  id: string;
  direction: Direction;
  parameters: readonly ParameterSpec[];
  /** In completion order. */
  completed: readonly TrialRecord[];
}

/** Parameters matched by name and scale: every mismatch at its pointer. */
function matchParameters(params: readonly NumericParameterInput[], input: CreateStudyInput, source: SourceStudy): FieldError[] {
  const errors: FieldError[] = [];
  const byName = new Map(source.parameters.map((p) => [p.name, p]));
  params.forEach((p, i) => {
    const s = byName.get(p.name);
    if (!s) errors.push({ path: pointer(['parameters', i, 'name']), message: `the source study ${source.id} has no parameter ${p.name}` });
    else if (isCategorical(s)) errors.push({ path: pointer(['parameters', i, 'type']), message: `categorical in the source study` });
    else if (s.scale !== p.scale) errors.push({ path: pointer(['parameters', i, 'scale']), message: `${p.scale} here but ${s.scale} in the source study` });
    if (p.prior) errors.push({ path: pointer(['parameters', i, 'prior']), message: 'give per-parameter priors or `prior.from_study`, not both' });
  });
  const names = new Set(input.parameters.map((p) => p.name));
  for (const s of source.parameters) {
    if (!names.has(s.name)) errors.push({ path: '/parameters', message: `the source study's parameter ${s.name} is missing here` });
  }
  if (source.direction !== input.direction) errors.push({ path: '/direction', message: `${input.direction} here but ${source.direction} in the source study` });
  return errors;
}

export interface WarmStart {
  prior: JointPriorInput;
  source: PriorSource;
  /** The source's completed trials whose values this study could hand out (bounds, integers, grids), in the source's completion order (copied when asked). */
  observations: TrialRecord[];
}

/**
 * `from_study`: the WS-CMA-ES distribution of the best ⌈γ·N⌉ (at least 2) completed trials, each
 * projected onto this study's bounds for the fit. Parameters without bounds are scaled by four
 * source prior standard deviations (the width a default prior's ±2σ would span).
 */
export function resolveFromStudy(input: CreateStudyInput, from: FromStudy, source: SourceStudy): WarmStart {
  const params = numericOnly(input, 'from_study');
  const errors = matchParameters(params, input, source);
  const { top_fraction: gamma, alpha } = from;
  const valued = source.completed.filter((t) => t.value !== null && Number.isFinite(t.value));
  if (valued.length < 2) errors.push({ path: '/prior/from_study/study_id', message: `the source study has ${valued.length} completed trials; at least 2 are needed` });
  if (errors.length > 0) throw new ValidationError(errors);
  // Best first in the source's direction, by the value its methods saw (a stopped trial's as
  // results/stopped.ts reads it: `completed` is in completion order).
  const reader = new ModelHistory(objectiveOf(source));
  const loss = new Map(valued.map((t) => [t.trialId, reader.value({ value: t.value!, stderr: t.stderr, stopped: isStopped(t) })]));
  const ranked = [...valued].sort((a, b) => loss.get(a.trialId)! - loss.get(b.trialId)! || a.trialId - b.trialId);
  const k = Math.min(ranked.length, Math.max(2, Math.ceil(gamma * ranked.length)));
  const clip = (p: NumericParameterInput, v: number) => (p.bounds ? Math.min(Math.max(v, p.bounds[0]), p.bounds[1]) : v);
  // The source's parameters matched these numeric ones by name and type (matchParameters), so its values are numbers.
  const num = (t: TrialRecord, p: NumericParameterInput) => t.parameters[p.name] as number;
  const top = ranked.slice(0, k).map((t) => params.map((p) => T(p, clip(p, num(t, p)))));
  const srcStd = new Map(source.parameters.filter((p): p is NumericParameterSpec => !isCategorical(p)).map((p) => [p.name, p.prior.std]));
  const fit = warmStartFit(top, scaleOf(params, (j) => 4 * srcStd.get(params[j]!.name)!), alpha);
  const observations = from.include_observations ? valued.filter((t) => params.every((p) => inSpace(p, num(t, p)))) : [];
  return {
    prior: fit,
    source: { from: 'study', study_id: source.id, top_fraction: gamma, alpha, points: k, include_observations: from.include_observations, observations_copied: observations.length },
    observations,
  };
}
