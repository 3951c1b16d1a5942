/**
 * Intermediate values and the median stopping rule through HTTP: the answer of each report, the
 * rule's conditions (min_steps, warmup_trials, peers at the step, direction), idempotent reports,
 * conflicts, bad input named by JSON pointer, stopped observations, and the curves in GET trial,
 * GET intermediate_values and the export (and back through import).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

async function create(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', batch_size: 1, ...extra }) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function suggest(id: string, client = 'w'): Promise<number> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=${client}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().trials[0].trial_id as number;
}

const report = (id: string, trial: number, payload: unknown) => app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${trial}/intermediate`, payload: payload as object });

async function observe(id: string, trial: number, value: number, stopped?: boolean) {
  const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: trial, value, ...(stopped === undefined ? {} : { stopped }) }] } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A trial that reports `curve` (value at step i) and completes with its last value. */
let clients = 0;
async function completedCurve(id: string, curve: number[]): Promise<number> {
  const t = await suggest(id, `done-${++clients}`);
  for (const [step, value] of curve.entries()) expect((await report(id, t, { step, value })).statusCode).toBe(200);
  await observe(id, t, curve[curve.length - 1]!);
  return t;
}

describe('intermediate values', () => {
  it('echoes the stopping rule with defaults filled in; off by default', async () => {
    const plain = await app.inject({ method: 'GET', url: `/v1/studies/${await create()}` });
    expect(plain.json()).toMatchObject({ allow_repeats: false, stopping: null });
    const withRule = await app.inject({ method: 'GET', url: `/v1/studies/${await create({ stopping: { rule: 'median' } })}` });
    expect(withRule.json().stopping).toEqual({ rule: 'median', min_steps: 0, warmup_trials: 5 });
  });

  it('without a rule never stops, and keeps the values', async () => {
    const id = await create();
    const t = await suggest(id);
    const res = await report(id, t, { step: 0, value: 5 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ trial_id: t, step: 0, value: 5, should_stop: false, reason: 'no_rule', detail: expect.any(String), median: null });
    const trial = await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials/${t}` });
    expect(trial.json()).toMatchObject({ trial_id: t, stopped: false, intermediate_values: [{ step: 0, value: 5 }] });
  });

  it('applies the median rule: warm-up, min_steps, peers at the step, strictly worse than the median', async () => {
    const id = await create({ stopping: { rule: 'median', min_steps: 1, warmup_trials: 3 } });
    // Completed curves: at step 1 their values are 4, 2, 3 → median 3.
    await completedCurve(id, [10, 4, 1]);
    await completedCurve(id, [10, 2]);
    const t = await suggest(id);
    expect((await report(id, t, { step: 1, value: 100 })).json()).toMatchObject({ should_stop: false, reason: 'warming_up' });
    await completedCurve(id, [10, 3, 2]);
    const u = await suggest(id, 'u');
    expect((await report(id, u, { step: 0, value: 100 })).json()).toMatchObject({ should_stop: false, reason: 'before_min_steps' });
    expect((await report(id, u, { step: 1, value: 3 })).json()).toMatchObject({ should_stop: false, reason: 'not_worse_than_median', median: 3 });
    // Best so far is what counts: 3 at step 1, against the median of step 2's values (1, 2 → 1.5).
    expect((await report(id, u, { step: 2, value: 2.5 })).json()).toMatchObject({ should_stop: true, reason: 'worse_than_median', median: 1.5 });
    expect((await report(id, u, { step: 7, value: 0 })).json()).toMatchObject({ should_stop: false, reason: 'no_peers_at_step' });
    // The trial on hold since the warm-up is now compared too: 100 at step 1 against 3.
    expect((await report(id, t, { step: 1, value: 100 })).json()).toMatchObject({ should_stop: true, reason: 'worse_than_median', median: 3 });
  });

  it('compares the other way when the study maximises', async () => {
    const id = await create({ direction: 'maximize', stopping: { rule: 'median', warmup_trials: 1 } });
    await completedCurve(id, [0.5]);
    const t = await suggest(id);
    expect((await report(id, t, { step: 0, value: 0.6 })).json()).toMatchObject({ should_stop: false });
    const u = await suggest(id, 'v');
    expect((await report(id, u, { step: 0, value: 0.4 })).json()).toMatchObject({ should_stop: true });
  });

  it('a stopped trial is COMPLETED with its value, marked stopped, and is not a peer of the rule', async () => {
    const id = await create({ stopping: { rule: 'median', warmup_trials: 1 } });
    await completedCurve(id, [1]);
    const t = await suggest(id);
    expect((await report(id, t, { step: 0, value: 9 })).json().should_stop).toBe(true);
    const done = await observe(id, t, 9, true);
    expect(done.trials[0]).toMatchObject({ state: 'COMPLETED', value: 9, stopped: true, failure_reason: 'stopped_early' });
    // Identical re-send is a no-op; the same value without "stopped" is a different result.
    await observe(id, t, 9, true);
    const other = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: t, value: 9 }] } });
    expect(other.statusCode).toBe(409);
    // Peers at step 0: only the first trial (1), not the stopped one (9): median 1.
    const u = await suggest(id, 'u');
    expect((await report(id, u, { step: 0, value: 5 })).json()).toMatchObject({ should_stop: true, median: 1 });
  });

  it('a report is idempotent per step; a different value is 409; a finished trial takes no new step', async () => {
    const id = await create();
    const t = await suggest(id);
    expect((await report(id, t, { step: 2, value: 1.5 })).statusCode).toBe(200);
    expect((await report(id, t, { step: 2, value: 1.5 })).statusCode).toBe(200);
    const conflict = await report(id, t, { step: 2, value: 1.6 });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().code).toBe('intermediate_value_conflict');
    await observe(id, t, 1.5);
    const retried = await report(id, t, { step: 2, value: 1.5 });
    expect(retried.json()).toMatchObject({ should_stop: false, reason: 'trial_finished' });
    const late = await report(id, t, { step: 3, value: 1 });
    expect(late.statusCode).toBe(409);
    expect(late.json().code).toBe('trial_not_active');
  });

  it('bad input is a 400 naming each problem by JSON pointer; unknown study or trial is 404', async () => {
    const id = await create();
    const t = await suggest(id);
    const bad = await report(id, t, { step: -1, value: 'x', extra: 1 });
    expect(bad.statusCode).toBe(400);
    const paths = (bad.json().errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['/step', '/value']));
    expect(JSON.stringify(bad.json().errors)).toContain('extra');
    expect((await report(id, t, { step: 1.5, value: 1 })).statusCode).toBe(400);
    // JSON text 1e999 parses to Infinity, which is not a finite value.
    const infinite = await app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${t}/intermediate`, headers: { 'content-type': 'application/json' }, payload: '{"step": 0, "value": 1e999}' });
    expect(infinite.statusCode).toBe(400);
    expect((await report(id, 999, { step: 0, value: 1 })).statusCode).toBe(404);
    expect((await report('nope', 1, { step: 0, value: 1 })).statusCode).toBe(404);
    const badRule = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ stopping: { rule: 'mean', min_steps: -1 }, allow_repeats: 'yes' }) });
    expect(badRule.statusCode).toBe(400);
    expect((badRule.json().errors as { path: string }[]).map((e) => e.path)).toEqual(expect.arrayContaining(['/stopping/rule', '/stopping/min_steps', '/allow_repeats']));
  });

  it('lists every curve, and carries them and the settings through export and import', async () => {
    const id = await create({ stopping: { rule: 'median', min_steps: 2, warmup_trials: 1 }, allow_repeats: true });
    const a = await completedCurve(id, [3, 2]);
    const b = await suggest(id);
    await report(id, b, { step: 0, value: 4 });
    const curves = await app.inject({ method: 'GET', url: `/v1/studies/${id}/intermediate_values` });
    expect(curves.json()).toEqual({
      trials: [
        { trial_id: a, intermediate_values: [{ step: 0, value: 3 }, { step: 1, value: 2 }] },
        { trial_id: b, intermediate_values: [{ step: 0, value: 4 }] },
      ],
      next_page_token: null,
    });
    const doc = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json();
    expect(doc.study).toMatchObject({ allow_repeats: true, stopping: { rule: 'median', min_steps: 2, warmup_trials: 1 } });
    expect(doc.intermediate_values).toHaveLength(3);
    const imported = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imported.statusCode, imported.body).toBe(201);
    const copy = imported.json();
    expect(copy).toMatchObject({ allow_repeats: true, stopping: { rule: 'median', min_steps: 2, warmup_trials: 1 } });
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${copy.id}/intermediate_values` })).json()).toEqual(curves.json());
    const broken = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: { ...doc, intermediate_values: [...doc.intermediate_values, { trial_id: 999, step: 0, value: 1, created_at: doc.exported_at }] } });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().errors[0].path).toBe('/intermediate_values/3/trial_id');
  });
});
