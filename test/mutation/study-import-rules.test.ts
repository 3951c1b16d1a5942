/**
 * Every consistency rule of an imported document (src/domain/transfer/study-import.ts checkDocument),
 * one bad document per rule: a study run through the API and exported, changed in one place, must be
 * refused with exactly that problem (its JSON pointer and its message) and nothing else. Beside the
 * rules, the nearest documents that must pass: a boundary value, the other branch of a condition, a
 * rounding the check tolerates. Mutation testing found these paths fed no wrong value of their kind
 * (bench-results/published/2026-11-29-mutation-import/README.md); the resumability check is driven by
 * engine runners that answer what a broken state would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { checkDocument } from '../../src/domain/transfer/study-import.js';
import type { StudyDocument } from '../../src/domain/transfer/study-document.js';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineResult, EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { ValidationError, type FieldError } from '../../src/domain/common/errors.js';
import { MAX_ERRORS } from '../../src/domain/common/schemas.js';
import { getStrategy, resolveOptions, Rng } from '../../src/engine/index.js';
import { makeTestApp } from '../helpers/app.js';

type Doc = StudyDocument;
type Trial = Doc['trials'][number];
type Body = Record<string, unknown>;
type Params = Record<string, number | string | boolean>;
/** What a worker reports for a suggested trial (its i-th of the round). */
type Observe = (p: Params, i: number) => Body;

let app: FastifyInstance;
const docs: Record<string, Doc> = {};

/** A study created from `body`, `rounds` batches suggested and reported, then `leased` more trials asked and left ACTIVE. */
async function exported(body: Body, rounds: number, observe: Observe, leased = 0): Promise<Doc> {
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'doc', seed: 5, ...body } });
  expect(created.statusCode, created.body).toBe(201);
  const { id, batch_size } = created.json() as { id: string; batch_size: number };
  for (let r = 0; r < rounds; r++) {
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${batch_size}` })).json().trials as { trial_id: number; parameters: Params }[];
    const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: trials.map((t, i) => ({ trial_id: t.trial_id, ...observe(t.parameters, i) })) } });
    expect(res.statusCode, res.body).toBe(200);
  }
  if (leased > 0) expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${leased}` })).statusCode).toBe(200);
  return (await app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json() as Doc;
}

const sumSquares = (p: Params) => Object.values(p).reduce<number>((a, v) => a + (typeof v === 'number' ? v * v : 0), 0);
const xy = [{ name: 'x', bounds: [-1, 1] }, { name: 'y', bounds: [-1, 1] }];
const SVC = [
  { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf', 'poly'] },
  { name: 'C', scale: 'log', bounds: [1e-3, 1e3] },
  { name: 'gamma', scale: 'log', bounds: [1e-4, 10], condition: { parent: 'kernel', values: ['rbf'] } },
];

beforeAll(async () => {
  ({ app } = await makeTestApp());
  // prob-cmaes, one engine state: three COMPLETED trials (the second with a standard error), one ACTIVE, one REQUESTED.
  docs.numeric = await exported({ method: 'prob-cmaes', batch_size: 3, parameters: xy }, 1, (p, i) => ({ value: sumSquares(p) + i / 10, ...(i === 1 ? { stderr: 0.01 } : {}) }), 1);
  // random, three engine states (generations 0, 1, 2).
  docs.generations = await exported({ method: 'random', batch_size: 2, parameters: xy }, 2, (p) => ({ value: sumSquares(p) }));
  // Two objectives (one maximised), two constraints, a declared reference point; one trial infeasible, one ACTIVE.
  docs.multi = await exported(
    { objectives: [{ name: 'error', direction: 'minimize' }, { name: 'accuracy', direction: 'maximize' }], constraints: [{ name: 'c1' }, { name: 'c2' }], reference_point: [5, -5], parameters: xy },
    1,
    (p, i) => (i === 2 ? { infeasible: true } : { values: [sumSquares(p), 1 - sumSquares(p)], constraints: [-1, i - 1] }),
    1,
  );
  docs.constrained = await exported({ method: 'random', batch_size: 2, constraints: [{ name: 'memory_over' }], parameters: xy }, 1, (p) => ({ value: sumSquares(p), constraints: [-1] }), 1);
  docs.categorical = await exported({ parameters: [{ name: 'a', type: 'categorical', choices: ['p', 'q', 'r'] }, { name: 'b', type: 'categorical', choices: [1, 2] }] }, 1, (p, i) => ({ value: i }));
  docs.mixed = await exported({ parameters: [{ name: 'x', bounds: [-1, 1], prior: { mean: 0.3, std: 0.2 } }, { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf'] }] }, 1, (p) => ({ value: sumSquares(p) }));
  docs.wide = await exported({ method: 'random', batch_size: 2, parameters: [{ name: 'x', bounds: [-1e4, 1e4], prior: { mean: 1000, std: 2000 } }] }, 1, (p) => ({ value: sumSquares(p) }));
  docs.conditional = await exported({ method: 'random', batch_size: 12, parameters: SVC }, 1, (p) => ({ value: sumSquares(p) }));
  docs.stepped = await exported({ method: 'random', batch_size: 2, parameters: [{ name: 'x', bounds: [-1, 1], step: 0.1 }] }, 1, (p) => ({ value: sumSquares(p) }));
});
afterAll(async () => {
  await app.close();
});

/** The problems checkDocument finds in `doc` ([] when it passes); anything but a ValidationError fails the test. */
async function problems(doc: Doc, runner?: EngineRunner): Promise<FieldError[]> {
  try {
    await checkDocument(doc, runner);
    return [];
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return err.errors;
  }
}

/** A copy of the named document changed by `change`. */
function changed(name: string, change: (d: Doc) => void): Doc {
  const d = structuredClone(docs[name]!);
  change(d);
  return d;
}

/** The index of the first trial of `d` that `pick` selects. */
function trialIndex(d: Doc, pick: (t: Trial) => boolean): number {
  const i = d.trials.findIndex(pick);
  expect(i, 'the document has such a trial').toBeGreaterThanOrEqual(0);
  return i;
}
const stateOf = (d: Doc, k = d.engine_states.length - 1) => d.engine_states[k]!.state as unknown as Record<string, unknown>;

describe('the documents the rules are applied to pass as exported', () => {
  it.each(['numeric', 'generations', 'multi', 'constrained', 'categorical', 'mixed', 'wide', 'conditional', 'stepped'])('%s', async (name) => {
    expect(await problems(docs[name]!)).toEqual([]);
  });
  it('hold what the rules need: an ACTIVE and a REQUESTED trial, an infeasible one, three snapshots, every kernel', () => {
    expect(docs.numeric!.trials.map((t) => t.state)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'ACTIVE', 'REQUESTED']);
    expect(docs.numeric!.trials[1]!.stderr).toBe(0.01);
    expect(docs.generations!.engine_states.map((e) => e.generation)).toEqual([0, 1, 2]);
    expect(docs.multi!.trials.filter((t) => t.infeasible === true)).toHaveLength(1);
    expect(docs.multi!.trials.some((t) => t.state === 'ACTIVE')).toBe(true);
    expect(docs.constrained!.trials.some((t) => t.state === 'ACTIVE')).toBe(true);
    expect(new Set(docs.conditional!.trials.map((t) => t.parameters.kernel))).toEqual(new Set(['linear', 'rbf', 'poly']));
    expect(stateOf(docs.categorical!).categorical).toHaveLength(2);
  });
});

const ACTIVE = 3, REQUESTED = 4;

describe('the study', () => {
  it.each<[string, string, (d: Doc) => void, FieldError[]]>([
    ['a parameter prior that is not the joint prior\'s marginal', 'numeric', (d) => { d.study.parameters[0]!.prior = { mean: 0.3, std: 0.5 }; }, [{ path: '/study/parameters/0/prior', message: 'must be the marginal of the joint prior (mean and √covariance diagonal)' }]],
    ['a recorded std off the covariance\'s diagonal', 'numeric', (d) => { d.study.prior.std = [0.5, 0.6]; }, [{ path: '/study/prior/std', message: 'must be the square root of the covariance diagonal' }]],
    ['a recorded std one value short', 'numeric', (d) => { d.study.prior.std = [0.5]; }, [{ path: '/study/prior/std', message: 'must be the square root of the covariance diagonal' }]],
  ])('%s', async (_, name, change, expected) => {
    expect(await problems(changed(name, change))).toEqual(expected);
  });

  it('tolerates rounding relative to the value: 10⁻¹⁰ of a mean of 1000 and a std of 2000 (the absolute difference is above 10⁻⁹ / 1000)', async () => {
    const d = changed('wide', (d) => {
      d.study.parameters[0]!.prior = { mean: 1000 * (1 + 1e-10), std: 2000 * (1 + 1e-10) };
      d.study.prior.std = [2000 * (1 - 1e-10)];
    });
    expect(await problems(d)).toEqual([]);
    expect(await problems(changed('wide', (d) => { d.study.prior.std = [2000 * (1 + 1e-8)]; }))).toEqual([{ path: '/study/prior/std', message: 'must be the square root of the covariance diagonal' }]);
  });

  it('tolerates a difference of exactly 10⁻⁹ near 0 (the bound is inclusive)', async () => {
    // 0 and 1e-9: |a − b| = 1e-9 = 1e-9 · max(1, |a|, |b|) in floating point.
    expect(await problems(changed('numeric', (d) => { d.study.parameters[0]!.prior = { mean: 1e-9, std: 0.5 }; }))).toEqual([]);
  });
});

describe('a trial', () => {
  const lease = [{ path: `/trials/${ACTIVE}/client_id`, message: 'an ACTIVE trial is leased to a client until a time' }];
  it.each<[string, string, (d: Doc) => void, FieldError[]]>([
    ['after the study\'s generation', 'numeric', (d) => { d.trials[0]!.generation = 5; }, [{ path: '/trials/0/generation', message: 'is after the study\'s generation (0)' }]],
    ['with another parameter in place of one of the study\'s', 'numeric', (d) => { d.trials[0]!.parameters = { x: 0, z: 0 }; }, [{ path: '/trials/0/parameters', message: 'must have exactly the study\'s parameters (x, y)' }]],
    ['with a point of the wrong size', 'numeric', (d) => { d.trials[0]!.point = [0]; }, [{ path: '/trials/0/point', message: 'must have 2 coordinates' }]],
    ['with a point off its parameters', 'numeric', (d) => { d.trials[1]!.point = [0.9, 0]; }, [{ path: '/trials/1/point', message: 'does not match the parameters (internal coordinates of the point)' }]],
    ['COMPLETED without a value', 'numeric', (d) => { d.trials[0]!.value = null; }, [{ path: '/trials/0/value', message: 'a COMPLETED trial needs a value (or values, or infeasible)' }]],
    ['REQUESTED with a value', 'numeric', (d) => { d.trials[REQUESTED]!.value = 1; }, [{ path: `/trials/${REQUESTED}/value`, message: 'a REQUESTED trial has no value' }]],
    ['ACTIVE with a standard error', 'numeric', (d) => { d.trials[ACTIVE]!.stderr = 0.1; }, [{ path: `/trials/${ACTIVE}/stderr`, message: 'a ACTIVE trial has no stderr' }]],
    ['COMPLETED without completed_at', 'numeric', (d) => { d.trials[0]!.completed_at = null; }, [{ path: '/trials/0/completed_at', message: 'a COMPLETED trial needs completed_at' }]],
    ['late but ACTIVE', 'numeric', (d) => { d.trials[ACTIVE]!.late = true; }, [{ path: `/trials/${ACTIVE}/late`, message: 'only a COMPLETED suggested trial can have a late result' }]],
    ['late but reported without a suggestion', 'numeric', (d) => { d.trials[0]!.late = true; d.trials[0]!.source = 'external'; }, [{ path: '/trials/0/late', message: 'only a COMPLETED suggested trial can have a late result' }]],
    ['ACTIVE without a client', 'numeric', (d) => { d.trials[ACTIVE]!.client_id = null; }, lease],
    ['ACTIVE without a lease\'s end', 'numeric', (d) => { d.trials[ACTIVE]!.lease_expires_at = null; }, [{ path: `/trials/${ACTIVE}/lease_expires_at`, message: 'an ACTIVE trial is leased to a client until a time' }]],
    ['ACTIVE with neither', 'numeric', (d) => { d.trials[ACTIVE]!.client_id = null; d.trials[ACTIVE]!.lease_expires_at = null; }, lease],
    ['off its parameter\'s grid', 'stepped', (d) => { d.trials[0]!.parameters = { x: 0.25 }; d.trials[0]!.point = null; }, [{ path: '/trials/0/parameters/x', message: 'must be a value of the grid -1 + k·0.1 (nearest: 0.2 or 0.3)' }]],
  ])('%s', async (_, name, change, expected) => {
    expect(await problems(changed(name, change))).toEqual(expected);
  });

  it('late, COMPLETED and suggested: passes', async () => {
    expect(await problems(changed('numeric', (d) => { d.trials[0]!.late = true; }))).toEqual([]);
  });
});

describe('a trial\'s result has the study\'s shape', () => {
  const infeasible = (d: Doc) => trialIndex(d, (t) => t.infeasible === true);
  const shapeOf = (d: Doc) => `/trials/${infeasible(d)}/infeasible`;
  const onInfeasible = (set: (t: Trial) => void) => (d: Doc) => set(d.trials[infeasible(d)]!);
  it.each<[string, string, (d: Doc) => void, (d: Doc) => FieldError[]]>([
    ['infeasible with a value', 'multi', onInfeasible((t) => { t.value = 1; }), (d) => [{ path: shapeOf(d), message: 'an infeasible trial has no value, values or constraints' }]],
    ['infeasible with values', 'multi', onInfeasible((t) => { t.values = [1, 1]; }), (d) => [{ path: shapeOf(d), message: 'an infeasible trial has no value, values or constraints' }]],
    ['infeasible with constraints', 'multi', onInfeasible((t) => { t.constraints = [0, 0]; }), (d) => [{ path: shapeOf(d), message: 'an infeasible trial has no value, values or constraints' }]],
    ['one value on a study of two objectives', 'multi', (d) => { d.trials[0]!.value = 1; }, () => [{ path: '/trials/0/value', message: 'the study has 2 objectives: a trial has `values`' }]],
    ['values one short', 'multi', (d) => { d.trials[0]!.values = [1]; }, () => [{ path: '/trials/0/values', message: 'needs one value per objective (2)' }]],
    ['values on a study of one objective', 'constrained', (d) => { d.trials[0]!.values = [1]; }, () => [{ path: '/trials/0/values', message: 'the study has one objective: a trial has `value`' }]],
    ['constraints one short', 'multi', (d) => { d.trials[0]!.constraints = [1]; }, () => [{ path: '/trials/0/constraints', message: 'needs one value per constraint (2)' }]],
    ['values without the two constraints', 'multi', (d) => { delete d.trials[0]!.constraints; }, () => [{ path: '/trials/0/constraints', message: 'missing: the study declares 2 constraints' }]],
    ['a value without the one constraint', 'constrained', (d) => { delete d.trials[0]!.constraints; }, () => [{ path: '/trials/0/constraints', message: 'missing: the study declares 1 constraint' }]],
  ])('%s', async (_, name, change, expected) => {
    const d = changed(name, change);
    expect(await problems(d)).toEqual(expected(d));
  });
});

describe('a trial of a conditional space has exactly its active parameters', () => {
  const linear = (d: Doc) => trialIndex(d, (t) => t.parameters.kernel === 'linear');
  const rbf = (d: Doc) => trialIndex(d, (t) => t.parameters.kernel === 'rbf');
  // The point holds the numeric coordinates first (C, gamma), then the categorical's (kernel).
  const K = { C: 0, gamma: 1, kernel: 2 };
  it.each<[string, (d: Doc) => number, (t: Trial) => void, (i: number) => FieldError[]]>([
    ['an inactive parameter given', linear, (t) => { t.parameters.gamma = 0.1; }, (i) => [{ path: `/trials/${i}/parameters/gamma`, message: 'inactive at this trial\'s values (its condition does not hold): leave it out' }]],
    ['an unknown parameter given', linear, (t) => { t.parameters.zeta = 1; }, (i) => [{ path: `/trials/${i}/parameters/zeta`, message: 'not a parameter of this study' }]],
    ['an active parameter left out', rbf, (t) => { delete t.parameters.gamma; }, (i) => [{ path: `/trials/${i}/parameters/gamma`, message: 'missing: active at this trial\'s values, so it needs a value' }]],
    ['a point off on an active number', rbf, (t) => { t.point![K.C] = t.point![K.C]! + 0.5; }, (i) => [{ path: `/trials/${i}/point`, message: 'does not match the parameters (internal coordinates of the point, on the active parameters)' }]],
    ['a point off on the categorical', rbf, (t) => { t.point![K.kernel] = (t.point![K.kernel]! + 1) % 3; }, (i) => [{ path: `/trials/${i}/point`, message: 'does not match the parameters (internal coordinates of the point, on the active parameters)' }]],
  ])('%s', async (_, pick, change, expected) => {
    const d = structuredClone(docs.conditional!);
    const i = pick(d);
    change(d.trials[i]!);
    expect(await problems(d)).toEqual(expected(i));
  });

  it('a point that differs only on an inactive coordinate passes (the engine keeps its own values there)', async () => {
    const d = structuredClone(docs.conditional!);
    const i = linear(d);
    d.trials[i]!.point![K.gamma] = d.trials[i]!.point![K.gamma]! + 0.5;
    expect(await problems(d)).toEqual([]);
  });
});

describe('a categorical search distribution', () => {
  const path = (d: Doc) => `/engine_states/${d.engine_states.length - 1}/state/categorical`;
  const message = 'must hold, per categorical parameter, the probabilities of its choices (summing to 1)';
  const third = [1 / 3, 1 / 3, 1 / 3], half = [0.5, 0.5];
  it.each<[string, unknown]>([
    ['not an array', 'x'],
    ['an array-like object', { 0: third, 1: half, length: 2 }],
    ['one row short', [third]],
    ['one row too many', [third, half, half]],
    ['the second row of the first\'s length', [third, third]],
    ['a row that is an object', [third, { 0: 0.5, 1: 0.5, length: 2 }]],
    ['a row longer than its choices, summing to 1', [third, [0.5, 0.5, 0]]],
    ['a row holding a boolean that adds up to 1', [[true, 0, 0], half]],
    ['a negative probability, the row summing to 1', [[-0.25, 0.75, 0.5], half]],
    ['a probability above 1 by less than the sum\'s tolerance', [[1 + 5e-7, 0, 0], half]],
    ['a row not summing to 1', [[0.5, 0.5, 0.5], half]],
  ])('%s', async (_, q) => {
    const d = changed('categorical', (d) => { stateOf(d).categorical = q; });
    expect(await problems(d)).toEqual([{ path: path(d), message }]);
  });

  it('probabilities of exactly 0 and 1 pass', async () => {
    expect(await problems(changed('categorical', (d) => { stateOf(d).categorical = [[1, 0, 0], [0, 1]]; }))).toEqual([]);
  });
  it('a numeric study\'s state holds none', async () => {
    expect(await problems(changed('numeric', (d) => { stateOf(d).categorical = [[1]]; }))).toEqual([{ path: '/engine_states/0/state/categorical', message: 'a study without categorical parameters has no categorical distribution' }]);
  });
});

describe('intermediate values', () => {
  const at = (d: Doc) => d.study.created_at;
  it.each<[string, (d: Doc) => Doc['intermediate_values'], FieldError[]]>([
    ['of a trial not in the document', (d) => [{ trial_id: 99, step: 0, value: 1, created_at: at(d) }], [{ path: '/intermediate_values/0/trial_id', message: 'is not a trial of the document' }]],
    ['twice at one step of a trial', (d) => [{ trial_id: 1, step: 0, value: 1, created_at: at(d) }, { trial_id: 2, step: 0, value: 1, created_at: at(d) }, { trial_id: 1, step: 0, value: 2, created_at: at(d) }], [{ path: '/intermediate_values/2/step', message: 'duplicates another value of trial 1 at this step' }]],
  ])('%s', async (_, values, expected) => {
    expect(await problems(changed('numeric', (d) => { d.intermediate_values = values(d); }))).toEqual(expected);
  });
});

describe('an engine state', () => {
  const rng = 'must be a random generator state: {kind: "xoroshiro128plus", words: four 32-bit integers, not all zero}';
  const on = (change: (st: Record<string, unknown>, d: Doc) => void) => (d: Doc) => change(stateOf(d, 0), d);
  it.each<[string, string, (d: Doc) => void, FieldError[]]>([
    ['a generation twice', 'generations', (d) => { d.engine_states[1]!.generation = 0; stateOf(d, 1).generation = 0; }, [{ path: '/engine_states/1/generation', message: 'duplicates another snapshot\'s generation' }]],
    ['a revision twice', 'generations', (d) => { d.engine_states[1]!.revision = d.engine_states[0]!.revision; }, [
      { path: '/engine_states/1/revision', message: 'duplicates another snapshot\'s revision' },
      { path: '/engine_states/1/revision', message: 'revisions must increase with the generation' },
    ]],
    ['a later generation at an earlier revision', 'generations', (d) => { d.engine_states[2]!.revision = d.engine_states[1]!.revision - 1; }, [{ path: '/engine_states/2/revision', message: 'revisions must increase with the generation' }]],
    ['none', 'generations', (d) => { d.engine_states = []; }, [{ path: '/engine_states', message: 'must hold at least the initial engine state' }, { path: '/study/generation', message: 'must be the latest engine-state generation (0)' }]],
    ['the study at another generation', 'generations', (d) => { d.study.generation = 5; }, [{ path: '/study/generation', message: 'must be the latest engine-state generation (2)' }]],
    ['its generation not the snapshot\'s', 'numeric', on((st) => { st.generation = 7; }), [{ path: '/engine_states/0/state/generation', message: 'must be the snapshot\'s generation (0)' }]],
    ['another method', 'numeric', on((st) => { st.method = 'cmaes'; }), [{ path: '/engine_states/0/state/method', message: 'must be the study\'s method (prob-cmaes)' }]],
    ['its version not the snapshot\'s', 'numeric', on((st) => { st.version = 2; }), [{ path: '/engine_states/0/state/version', message: 'must be the snapshot\'s version (3)' }]],
    ['a version-3 state recorded as version 1', 'numeric', (d) => { d.engine_states[0]!.version = 1; }, [{ path: '/engine_states/0/state/version', message: 'must be the snapshot\'s version (1)' }]],
    ['version 0', 'numeric', (d) => { d.engine_states[0]!.version = 0; stateOf(d, 0).version = 0; }, [{ path: '/engine_states/0/version', message: 'must be a version prob-cmaes reads (1 to 3)' }]],
    ['version 1.5', 'numeric', (d) => { d.engine_states[0]!.version = 1.5; stateOf(d, 0).version = 1.5; }, [{ path: '/engine_states/0/version', message: 'must be a version prob-cmaes reads (1 to 3)' }]],
    ['one parameter not the options\'', 'numeric', on((st) => { (st.params as Record<string, unknown>).candidates = 999; }), [{ path: '/engine_states/0/state/params', message: 'must be the parameters prob-cmaes resolves from the study\'s options (candidates differ)' }]],
    ['five parameters not the options\'', 'numeric', on((st) => { Object.assign(st.params as object, { etaMean: 2, etaCov: 0.1, etaCovQuadratic: 2, candidates: 999, activeSetCap: 7 }); }), [{ path: '/engine_states/0/state/params', message: 'must be the parameters prob-cmaes resolves from the study\'s options (etaMean, etaCov, etaCovQuadratic, candidates, activeSetCap differ)' }]],
    ['six parameters not the options\'', 'numeric', on((st) => { Object.assign(st.params as object, { etaMean: 2, etaCov: 0.1, etaCovQuadratic: 2, candidates: 999, activeSetCap: 7, gpRestarts: 3 }); }), [{ path: '/engine_states/0/state/params', message: 'must be the parameters prob-cmaes resolves from the study\'s options (etaMean, etaCov, etaCovQuadratic, candidates, activeSetCap, 1 more differ)' }]],
    ['another dimension', 'generations', on((st) => { st.dim = 3; }), [{ path: '/engine_states/0/state/dim', message: 'must be the number of parameters (2)' }]],
    ['another batch size', 'numeric', on((st) => { st.batchSize = 4; }), [{ path: '/engine_states/0/state/batchSize', message: 'must be the study\'s batch size (3)' }]],
    ['a mean one short', 'numeric', on((st) => { st.mean = [0]; }), [{ path: '/engine_states/0/state/mean', message: 'must be 2 numbers' }]],
    ['a mean holding a string', 'numeric', on((st) => { st.mean = [0, 'a']; }), [{ path: '/engine_states/0/state/mean', message: 'must be 2 numbers' }]],
    ['a NaN in the mean (the distribution is then not read in user units)', 'numeric', on((st) => { st.mean = [Number.NaN, 0]; }), [{ path: '/engine_states/0/state/mean/0', message: 'must be a finite number' }]],
    ['a covariance of one row', 'numeric', on((st) => { st.cov = [[1, 0]]; }), [{ path: '/engine_states/0/state/cov', message: 'must be a 2×2 matrix' }]],
    ['a symmetric indefinite covariance', 'numeric', on((st) => { st.cov = [[1, 2], [2, 1]]; }), [{ path: '/engine_states/0/state/cov', message: 'must be a symmetric positive-definite matrix' }]],
    ['an asymmetric covariance whose lower triangle is positive-definite', 'numeric', on((st) => { st.cov = [[1, 0.5], [0, 1]]; }), [{ path: '/engine_states/0/state/cov', message: 'must be a symmetric positive-definite matrix' }]],
    ['a mean that overflows in user units', 'wide', (d) => { for (const e of d.engine_states) (e.state as unknown as { mean: number[] }).mean = [1e305]; }, [0, 1].map((k) => ({ path: `/engine_states/${k}/state/mean`, message: 'the distribution (mean, or covariance in the parameters\' scale) overflows a double in user units' }))],
    ...([
      ['no generator', null],
      ['a number for a generator', 5],
      ['words that are not an array', { kind: 'xoroshiro128plus', words: 'abcd' }],
      ['three words', { kind: 'xoroshiro128plus', words: [1, 2, 3] }],
      ['a fractional word', { kind: 'xoroshiro128plus', words: [1.5, 1, 1, 1] }],
      ['a word of 2³²', { kind: 'xoroshiro128plus', words: [2 ** 32, 1, 1, 1] }],
      ['a word below −2³¹', { kind: 'xoroshiro128plus', words: [-(2 ** 31) - 1, 1, 1, 1] }],
      ['all words zero', { kind: 'xoroshiro128plus', words: [0, 0, 0, 0] }],
      ['another kind of generator', { kind: 'mt19937', words: [1, 2, 3, 4] }],
    ] as const).map(([what, value]): [string, string, (d: Doc) => void, FieldError[]] => [what, 'numeric', on((st) => { st.rng = value; }), [{ path: '/engine_states/0/state/rng', message: rng }]]),
  ])('%s', async (_, name, change, expected) => {
    expect(await problems(changed(name, change))).toEqual(expected);
  });

  it('another method\'s state, of a version the study\'s method reads: one message, not the misreading of it as the study\'s', async () => {
    const cmaes = getStrategy('cmaes').init({ dim: 2, batchSize: 3, options: resolveOptions('cmaes', 2), box: null }, Rng.fromSeed(1));
    const d = changed('numeric', (d) => {
      d.engine_states[0]!.version = cmaes.version;
      d.engine_states[0]!.state = { ...cmaes, generation: 0 } as never;
    });
    expect(await problems(d)).toEqual([{ path: '/engine_states/0/state/method', message: 'must be the study\'s method (prob-cmaes)' }]);
  });

  it('generator words at the ends of their range, some zero, pass', async () => {
    for (const words of [[-(2 ** 31), 0, 0, 1], [2 ** 32 - 1, 0, 7, 0]]) {
      expect(await problems(changed('numeric', (d) => { stateOf(d, 0).rng = { kind: 'xoroshiro128plus', words }; })), JSON.stringify(words)).toEqual([]);
    }
  });

  it('nesting: the first object 32 levels down is refused, at its own pointer', async () => {
    const nest = (n: number): object => (n === 0 ? {} : { a: nest(n - 1) });
    // state is level 0, state.junk level 1: the object at level 32 is junk followed by 31 a's.
    const errors = await problems(changed('numeric', on((st) => { st.junk = nest(40); })));
    expect(errors).toEqual([{ path: `/engine_states/0/state/junk${'/a'.repeat(31)}`, message: 'nests deeper than 32 levels' }]);
    expect(await problems(changed('numeric', on((st) => { st.junk = nest(30); })))).toEqual([]);
  });

  it('snapshots in any order pass, and the optimiser resumes from the latest generation\'s', async () => {
    for (const order of ['as exported', 'reversed', 'rotated'] as const) {
      const d = changed('generations', (d) => {
        if (order === 'reversed') d.engine_states.reverse();
        if (order === 'rotated') d.engine_states.push(d.engine_states.shift()!);
      });
      const tasks: EngineTask[] = [];
      expect(await problems(d, recording(tasks)), order).toEqual([]);
      const asked = tasks.filter((t) => t.op === 'ask') as Extract<EngineTask, { op: 'ask' }>[];
      expect(asked.map((t) => t.state.generation), order).toEqual([2]);
    }
  });
});

/** The inline runner, recording every task it is given. */
function recording(tasks: EngineTask[]): EngineRunner {
  const inline = new InlineEngineRunner();
  return { run: (task) => (tasks.push(task), inline.run(task)), close: () => inline.close() };
}

/** The inline runner with its results passed through `edit` (what a broken state would make the engine answer). */
function answering(edit: (r: EngineResult) => EngineResult): EngineRunner {
  const inline = new InlineEngineRunner();
  return { run: async (task) => { const r = await inline.run(task); return { ...r, result: edit(structuredClone(r.result)) }; }, close: () => inline.close() };
}

describe('the resumability check', () => {
  const cannot = (why: string) => [{ path: '/engine_states/0/state', message: `the optimiser cannot resume from this state (${why})` }];
  const points = (f: (p: number[][]) => number[][]) => (r: EngineResult): EngineResult => (r.op === 'ask' ? { ...r, points: f(r.points) } : r);
  const estimate = (e: { predicted: number | null; predicted_std: number | null }) => (r: EngineResult): EngineResult => (r.op === 'estimate' ? { ...r, estimate: { ...r.estimate, ...e } } : r);
  it.each<[string, (r: EngineResult) => EngineResult, FieldError[]]>([
    ['a point one coordinate short', points((p) => p.map((x) => x.slice(1))), cannot('it yields non-finite points')],
    ['the last of three points one coordinate short', points((p) => p.map((x, i) => (i === p.length - 1 ? x.slice(1) : x))), cannot('it yields non-finite points')],
    ['a NaN coordinate in one point', points((p) => p.map((x, i) => (i === 1 ? [x[0]!, Number.NaN] : x))), cannot('it yields non-finite points')],
    ['a non-finite prediction', estimate({ predicted: Number.NaN, predicted_std: 1 }), cannot('its model predicts non-finite values')],
    ['a non-finite prediction\'s standard deviation', estimate({ predicted: 1, predicted_std: Number.POSITIVE_INFINITY }), cannot('its model predicts non-finite values')],
    ['an estimate answered to an ask', (r) => (r.op === 'ask' ? { op: 'estimate', estimate: { predicted: null, predicted_std: null } } : r), cannot('engine answered estimate to ask')],
    ['a generation answered to an estimate', (r) => (r.op === 'estimate' ? { op: 'ask', state: {} as never, points: [] } : r), cannot('engine answered ask to estimate')],
    ['no prediction at all (a model-free method)', estimate({ predicted: null, predicted_std: null }), []],
  ])('%s', async (_, edit, expected) => {
    expect(docs.numeric!.study.batch_size).toBe(3);
    expect(await problems(docs.numeric!, answering(edit))).toEqual(expected);
  });

  it('a runner that throws: its message', async () => {
    const broken: EngineRunner = { run: () => Promise.reject(new Error('worker lost')), close: async () => {} };
    expect(await problems(docs.numeric!, broken)).toEqual(cannot('worker lost'));
  });

  it('the history: COMPLETED trials in completion order (time, then id), each with its standard error', async () => {
    const d = changed('numeric', (d) => {
      const [t1, t2, t3] = d.trials;
      t1!.completed_at = '2025-01-01T12:00:00.090Z';
      t2!.completed_at = '2025-01-01T12:00:00.050Z';
      t3!.completed_at = '2025-01-01T12:00:00.050Z';
      t3!.trial_id = 30;
    });
    const tasks: EngineTask[] = [];
    expect(await problems(d, recording(tasks))).toEqual([]);
    const [t1, t2, t3] = d.trials;
    const est = tasks.find((t) => t.op === 'estimate') as Extract<EngineTask, { op: 'estimate' }>;
    expect(est.history).toEqual([
      { x: t2!.point, y: t2!.value, stderr: 0.01 },
      { x: t3!.point, y: t3!.value },
      { x: t1!.point, y: t1!.value },
    ]);
    // Ties by id: the later id after the earlier one, whichever the document lists first.
    const swapped = changed('numeric', (d) => {
      d.trials[1]!.completed_at = d.trials[2]!.completed_at = '2025-01-01T12:00:00.050Z';
      d.trials[1]!.trial_id = 40;
    });
    const more: EngineTask[] = [];
    expect(await problems(swapped, recording(more))).toEqual([]);
    const h = (more.find((t) => t.op === 'estimate') as Extract<EngineTask, { op: 'estimate' }>).history;
    expect(h.map((o) => o.x)).toEqual([swapped.trials[0]!.point, swapped.trials[2]!.point, swapped.trials[1]!.point]);
    // A trial listed after an earlier-completed one with a higher id: by time first, the id only on a tie.
    const later = changed('numeric', (d) => {
      d.trials[0]!.trial_id = 10;
      d.trials[0]!.completed_at = d.trials[2]!.completed_at = '2025-01-01T12:00:00.050Z';
      d.trials[1]!.completed_at = '2025-01-01T12:00:00.090Z';
    });
    const third: EngineTask[] = [];
    expect(await problems(later, recording(third))).toEqual([]);
    const h3 = (third.find((t) => t.op === 'estimate') as Extract<EngineTask, { op: 'estimate' }>).history;
    expect(h3.map((o) => o.x)).toEqual([later.trials[2]!.point, later.trials[0]!.point, later.trials[1]!.point]);
  });

  it('the history of several objectives: each trial\'s losses and constraints, the infeasible point flagged', async () => {
    const tasks: EngineTask[] = [];
    const d = docs.multi!;
    expect(await problems(d, recording(tasks))).toEqual([]);
    const est = tasks.find((t) => t.op === 'estimate') as Extract<EngineTask, { op: 'estimate' }>;
    const completed = d.trials.filter((t) => t.state === 'COMPLETED');
    expect(completed).toHaveLength(3);
    expect(est.history).toEqual(completed.map((t) => (t.infeasible === true
      ? { x: t.point, y: 0, infeasible: true }
      // error minimised as is, accuracy maximised: its loss is its negative.
      : { x: t.point, y: t.values![0], f: [t.values![0], -t.values![1]!], c: t.constraints })));
  });
});

describe('the report is cut at MAX_ERRORS problems', () => {
  it('25 trials with three problems each: exactly MAX_ERRORS reported, the first ones', async () => {
    const d = changed('numeric', (d) => {
      const template = d.trials[REQUESTED]!;
      d.trials = Array.from({ length: 25 }, (_, i) => ({ ...structuredClone(template), trial_id: 100 + i, generation: 9, value: 1, stderr: 0.1 }));
    });
    const errors = await problems(d);
    expect(errors).toHaveLength(MAX_ERRORS);
    expect(errors.slice(0, 3)).toEqual([
      { path: '/trials/0/generation', message: 'is after the study\'s generation (0)' },
      { path: '/trials/0/value', message: 'a REQUESTED trial has no value' },
      { path: '/trials/0/stderr', message: 'a REQUESTED trial has no stderr' },
    ]);
    expect(errors[MAX_ERRORS - 1]!.path).toBe('/trials/6/value');
  });
});
