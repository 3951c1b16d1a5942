/**
 * The fitted forms of a study's prior (src/domain/studies/prior-sources.ts), called directly: every
 * problem of `from_points` and `from_study` at its pointer with its message, and the fits made from
 * exactly the data and units the module's header names (the transformed scale, each parameter's unit
 * the transformed width of its bounds, or the data's spread, or four source prior standard
 * deviations), compared with prior-fit.ts's estimators on data prepared by hand.
 */
import { describe, expect, it } from 'vitest';
import { resolveFromPoints, resolveFromStudy, type FromStudy, type SourceStudy } from '../../src/domain/studies/prior-sources.js';
import { shrunkFit, warmStartFit } from '../../src/domain/studies/prior-fit.js';
import { ValidationError, type FieldError } from '../../src/domain/common/errors.js';
import type { CreateStudyInput } from '../../src/domain/studies/study-request.js';
import type { TrialRecord } from '../../src/storage/index.js';

type Param = Record<string, unknown>;
const num = (name: string, over: Param = {}): Param => ({ name, type: 'float', scale: 'linear', bounds: [0, 10], ...over });
const input = (parameters: Param[], direction = 'minimize'): CreateStudyInput => ({ name: 's', direction, parameters, method: 'random', batch_size: 1, options: {} }) as unknown as CreateStudyInput;

function problems(f: () => unknown): FieldError[] {
  try {
    f();
    return [];
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return err.errors;
  }
}

describe('from_points', () => {
  const two = [num('x'), num('y')];
  const pts = [{ x: 1, y: 2 }, { x: 3, y: 5 }, { x: 4, y: 4 }];
  it.each<[string, Param[], Record<string, unknown>[], number[] | undefined, FieldError[]]>([
    ['a categorical parameter', [num('x'), { name: 'c', type: 'categorical', choices: ['a', 'b'] }], pts, undefined, [{ path: '/parameters/1/type', message: '`prior.from_points` fits a Gaussian to numeric parameters only; give this categorical parameter\'s prior in its own `prior.probabilities`, and the others\' as per-parameter or joint {mean, covariance} priors' }]],
    ['one point', two, [{ x: 1, y: 2 }], undefined, [{ path: '/prior/from_points', message: 'give at least 2 points (got 1)' }]],
    ['a name the study lacks', two, [{ x: 1, y: 2, z: 0 }, pts[1]!], undefined, [{ path: '/prior/from_points/0/z', message: 'not a parameter of this study' }]],
    ['a parameter left out', two, [{ x: 1 }, pts[1]!], undefined, [{ path: '/prior/from_points/0', message: 'missing parameter y' }]],
    ['a string', two, [{ x: '1', y: 2 }, pts[1]!], undefined, [{ path: '/prior/from_points/0/x', message: 'must be a finite number' }]],
    ['NaN', two, [pts[0]!, { x: Number.NaN, y: 2 }], undefined, [{ path: '/prior/from_points/1/x', message: 'must be a finite number' }]],
    ['above the bounds', two, [pts[0]!, { x: 10.5, y: 2 }], undefined, [{ path: '/prior/from_points/1/x', message: 'must lie within the bounds [0, 10]' }]],
    ['below the bounds', two, [pts[0]!, { x: 1, y: -0.5 }], undefined, [{ path: '/prior/from_points/1/y', message: 'must lie within the bounds [0, 10]' }]],
    ['0 on an unbounded log scale', [num('x', { scale: 'log', bounds: null })], [{ x: 1 }, { x: 0 }], undefined, [{ path: '/prior/from_points/1/x', message: 'must be > 0 (log scale)' }]],
    ['weights one short', two, pts, [1, 2], [{ path: '/prior/weights', message: 'must have one weight per point (3), got 2' }]],
    ['a zero and a non-finite weight', two, pts, [1, 0, Number.POSITIVE_INFINITY], [{ path: '/prior/weights/1', message: 'must be a positive finite number' }, { path: '/prior/weights/2', message: 'must be a positive finite number' }]],
    ['a parameter\'s own prior beside them', [num('x', { prior: { mean: 1, std: 1 } }), num('y')], pts, undefined, [{ path: '/parameters/0/prior', message: 'give per-parameter priors or `prior.from_points`, not both' }]],
    ['every point the same', two, [pts[0]!, pts[0]!], undefined, [{ path: '/prior/from_points', message: 'the points are all equal: they give no spread to fit a covariance to' }]],
  ])('%s', (_, parameters, points, weights, expected) => {
    expect(problems(() => resolveFromPoints(input(parameters), points as never, weights))).toEqual(expected);
  });

  it('points on the bounds pass', () => {
    expect(problems(() => resolveFromPoints(input(two), [{ x: 0, y: 10 }, { x: 10, y: 0 }], undefined))).toEqual([]);
  });

  it('the fit: ln of log parameters, units from the bounds\' transformed width, the data\'s spread without bounds', () => {
    const parameters = [num('a', { bounds: [0, 4] }), num('l', { scale: 'log', bounds: [1, Math.E ** 2] }), num('u', { bounds: null }), num('c', { bounds: null }), num('s', { bounds: null })];
    const points = [{ a: 1, l: 1, u: 2, c: 5, s: 0.2 }, { a: 3, l: Math.E, u: -1, c: 5, s: 0.2 }, { a: 2, l: Math.E ** 2, u: 0, c: 5, s: 0.2 }];
    const x = points.map((p) => [p.a, Math.log(p.l), p.u, p.c, p.s]);
    // a: 4 − 0; l: ln e² − ln 1 = 2; u: 2 − (−1) = 3; c, s: no spread, max(1, |first value|) = 5 and 1.
    const want = shrunkFit(x, [1, 1, 1], [4, 2, 3, 5, 1])!;
    const got = resolveFromPoints(input(parameters), points, undefined);
    expect(got.prior.mean).toEqual(want.mean);
    expect(got.prior.covariance).toEqual(want.covariance);
    expect(got.source).toEqual({ from: 'points', points: 3, shrinkage: want.shrinkage });
  });

  it('weights as given; a log parameter whose low bound is 0 takes the data\'s spread, not an infinite width', () => {
    const parameters = [num('l', { scale: 'log', bounds: [0, 1] }), num('b', { bounds: [2, 2] })];
    const points = [{ l: 0.5, b: 2 }, { l: 0.25, b: 2 }, { l: 1, b: 2 }];
    // l: ln 1 − ln 0.25 = ln 4; b: bounds of zero width, so the data's (no spread: max(1, 2) = 2).
    const x = points.map((p) => [Math.log(p.l), p.b]);
    const got = resolveFromPoints(input(parameters), points, [1, 2, 3]);
    const want = shrunkFit(x, [1, 2, 3], [Math.log(4), 2])!;
    expect(got.prior.mean).toEqual(want.mean);
    expect(got.prior.covariance).toEqual(want.covariance);
  });
});

describe('from_points: the units', () => {
  it('a log parameter with a positive low bound is in units of its transformed width, not the data\'s spread', () => {
    const points = [{ l: 1 }, { l: Math.E }, { l: Math.E ** 2 }];
    // Width ln e⁴ − ln 1 = 4; the points span only 2 of it.
    const got = resolveFromPoints(input([num('l', { scale: 'log', bounds: [1, Math.E ** 4] })]), points, undefined);
    const want = shrunkFit(points.map((p) => [Math.log(p.l)]), [1, 1, 1], [4])!;
    expect(got.prior).toEqual({ mean: want.mean, covariance: want.covariance });
  });

  it('points whose covariance overflows a double are refused as such, not as equal', () => {
    const far = [num('u', { bounds: null }), num('v', { bounds: null })];
    for (const points of [[{ u: -1e308, v: 0 }, { u: 1e308, v: 1 }], [{ u: 0, v: 0 }, { u: 1e200, v: 1 }]]) {
      expect(problems(() => resolveFromPoints(input(far), points, undefined))).toEqual([{ path: '/prior/from_points', message: 'the points are too far apart: their covariance overflows a double (in each parameter\'s transformed scale)' }]);
    }
  });
});

describe('from_study', () => {
  const from = (over: Partial<FromStudy> = {}): FromStudy => ({ study_id: 'src', top_fraction: 0.4, alpha: 0.1, include_observations: false, ...over }) as FromStudy;
  const sourceParams = [
    { name: 'x', type: 'float', scale: 'linear', bounds: [0, 10], step: null, prior: { mean: 5, std: 2.5 } },
    { name: 'y', type: 'float', scale: 'linear', bounds: null, step: null, prior: { mean: 0, std: 0.5 } },
  ];
  const trial = (trialId: number, x: number, y: number, value: number | null, over: Partial<TrialRecord> = {}): TrialRecord =>
    ({ trialId, state: 'COMPLETED', value, stderr: null, failureReason: null, parameters: { x, y }, ...over }) as TrialRecord;
  const completed = [trial(1, 5, 0, 5), trial(2, 1, 0.5, 1), trial(3, 3, -1, 3), trial(4, 12, 1, 2), trial(5, 2.5, 2, 4), trial(6, 4, 0, null), trial(7, 6, 0, Number.NaN)];
  const source = (over: Partial<SourceStudy> = {}): SourceStudy => ({ id: 'src', direction: 'minimize', parameters: sourceParams as never, completed, ...over });
  const here = [num('x'), num('y', { bounds: null })];

  it.each<[string, Param[], string, SourceStudy, FieldError[]]>([
    ['a categorical parameter here', [num('x'), num('y', { bounds: null }), { name: 'c', type: 'categorical', choices: [1] }], 'minimize', source(), [{ path: '/parameters/2/type', message: '`prior.from_study` fits a Gaussian to numeric parameters only; give this categorical parameter\'s prior in its own `prior.probabilities`, and the others\' as per-parameter or joint {mean, covariance} priors' }]],
    ['a parameter the source lacks', [num('x'), num('z')], 'minimize', source(), [
      { path: '/parameters/1/name', message: 'the source study src has no parameter z' },
      { path: '/parameters', message: 'the source study\'s parameter y is missing here' },
    ]],
    ['categorical in the source', here, 'minimize', source({ parameters: [sourceParams[0], { name: 'y', type: 'categorical', choices: [1, 2], prior: { probabilities: [0.5, 0.5] } }] as never }), [{ path: '/parameters/1/type', message: 'categorical in the source study' }]],
    ['another scale', [num('x', { scale: 'log', bounds: [1, 10] }), num('y', { bounds: null })], 'minimize', source(), [{ path: '/parameters/0/scale', message: 'log here but linear in the source study' }]],
    ['a parameter\'s own prior beside it', [num('x', { prior: { mean: 5, std: 1 } }), num('y', { bounds: null })], 'minimize', source(), [{ path: '/parameters/0/prior', message: 'give per-parameter priors or `prior.from_study`, not both' }]],
    ['the other direction', here, 'maximize', source(), [{ path: '/direction', message: 'maximize here but minimize in the source study' }]],
    ['one valued trial', here, 'minimize', source({ completed: [completed[0]!, completed[5]!, completed[6]!] }), [{ path: '/prior/from_study/study_id', message: 'the source study has 1 completed trials; at least 2 are needed' }]],
  ])('%s', (_, parameters, direction, src, expected) => {
    expect(problems(() => resolveFromStudy(input(parameters, direction), from(), src))).toEqual(expected);
  });

  it('the best ⌈γ·N⌉ valued trials, clipped to these bounds, in units of the bounds\' width or four source prior stds', () => {
    const got = resolveFromStudy(input(here), from(), source());
    // Valued: trials 1–5 (6 has no value, 7 NaN). γ·N = 2: the two lowest, trial 2 (1) and trial 4 (2, x = 12 clipped to 10).
    const want = warmStartFit([[1, 0.5], [10, 1]], [10, 4 * 0.5], 0.1);
    expect(got.prior).toEqual(want);
    expect(got.source).toEqual({ from: 'study', study_id: 'src', top_fraction: 0.4, alpha: 0.1, points: 2, include_observations: false, observations_copied: 0 });
    expect(got.observations).toEqual([]);
  });

  it('maximising: the highest first; ties by trial id; never fewer than 2', () => {
    const tied = [trial(9, 1, 0, 3), trial(8, 2, 0, 3), trial(3, 3, 0, 1)];
    const max = resolveFromStudy(input(here, 'maximize'), from({ top_fraction: 0.01 }), source({ direction: 'maximize', completed: tied }));
    // Both 3s before the 1; trial 8 before trial 9.
    expect(max.prior).toEqual(warmStartFit([[2, 0], [1, 0]], [10, 2], 0.1));
    expect(max.source).toMatchObject({ points: 2 });
    // Three tied, two taken: the two lowest ids, whatever the source's order.
    const three = [trial(9, 1, 0, 3), trial(8, 2, 0, 3), trial(7, 4, 0, 3)];
    const ties = resolveFromStudy(input(here), from({ top_fraction: 0.01 }), source({ completed: three }));
    expect(ties.prior).toEqual(warmStartFit([[4, 0], [2, 0]], [10, 2], 0.1));
    const all = resolveFromStudy(input(here), from({ top_fraction: 1 }), source());
    expect(all.source).toMatchObject({ points: 5 });
  });

  it('observations copied: only values this study could hand out (bounds, integers, its grid), in the source\'s order', () => {
    const parameters = [num('x', { type: 'int', bounds: [0, 10], step: 2 }), num('y', { bounds: null })];
    const src = source({ completed: [trial(1, 4, 0, 1), trial(2, 3, 0, 2), trial(3, 2.5, 0, 3), trial(4, 12, 0, 4), trial(5, 10, 0.3, 5), trial(6, 0, 0, null)] });
    const got = resolveFromStudy(input(parameters), from({ include_observations: true, top_fraction: 1 }), src);
    expect(got.observations.map((t) => t.trialId)).toEqual([1, 5]);
    expect(got.source).toMatchObject({ include_observations: true, observations_copied: 2 });
    // An int parameter without a step here, a float in the source (parameters match by name and scale): integers only.
    const intHere = [num('x', { type: 'int', bounds: [0, 10] }), num('y', { bounds: null })];
    const floats = source({ completed: [trial(1, 4, 0, 1), trial(2, 2.5, 0, 2), trial(3, 7, 0, 3)] });
    expect(resolveFromStudy(input(intHere), from({ include_observations: true }), floats).observations.map((t) => t.trialId)).toEqual([1, 3]);
    // A log parameter: in its bounds and positive.
    const logHere = [num('x', { scale: 'log', bounds: [1, 10] }), num('y', { bounds: null })];
    const logSrc = source({ parameters: [{ ...sourceParams[0], scale: 'log', bounds: [0.5, 20] }, sourceParams[1]] as never, completed: [trial(1, 0.5, 0, 1), trial(2, 1, 0, 2), trial(3, 10, 0, 3), trial(4, 20, 0, 4)] });
    expect(resolveFromStudy(input(logHere), from({ include_observations: true }), logSrc).observations.map((t) => t.trialId)).toEqual([2, 3]);
  });
});
