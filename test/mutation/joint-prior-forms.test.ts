/**
 * The forms of a study's joint prior (src/domain/studies/study-request.ts, the request schema's
 * `prior`): exactly one of {mean, covariance}, {from_points[, weights]} and {from_study}; the first
 * whole; weights only beside from_points. Each refusal at its path with its message.
 */
import { describe, expect, it } from 'vitest';
import { CreateStudyRequest } from '../../src/domain/studies/study-request.js';

const base = { name: 's', parameters: [{ name: 'x', type: 'float', bounds: [0, 1] }] };
const points = [{ x: 0.2 }, { x: 0.4 }];
const fromStudy = { study_id: '00000000-0000-4000-8000-000000000000' };

function issues(prior: unknown): { path: (string | number)[]; message: string }[] {
  const r = CreateStudyRequest.safeParse({ ...base, prior });
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path as (string | number)[], message: i.message }));
}

const oneForm = 'give exactly one of {mean, covariance}, {from_points[, weights]} or {from_study}';

describe('the joint prior\'s forms', () => {
  it.each<[string, unknown, { path: (string | number)[]; message: string }[]]>([
    ['mean and covariance', { mean: [0.5], covariance: [[1]] }, []],
    ['from_points with weights', { from_points: points, weights: [1, 2] }, []],
    ['from_study', { from_study: fromStudy }, []],
    ['none of them', {}, [{ path: ['prior'], message: oneForm }]],
    ['mean beside from_points', { mean: [0.5], from_points: points }, [{ path: ['prior'], message: oneForm }]],
    ['covariance beside from_study', { covariance: [[1]], from_study: fromStudy }, [{ path: ['prior'], message: oneForm }]],
    ['a mean alone', { mean: [0.5] }, [{ path: ['prior', 'covariance'], message: 'a joint prior needs both mean and covariance' }]],
    ['a covariance alone', { covariance: [[1]] }, [{ path: ['prior', 'mean'], message: 'a joint prior needs both mean and covariance' }]],
    ['weights beside from_study', { from_study: fromStudy, weights: [1] }, [{ path: ['prior', 'weights'], message: 'weights go with from_points' }]],
  ])('%s', (_, prior, expected) => {
    expect(issues(prior)).toEqual(expected);
  });
});
