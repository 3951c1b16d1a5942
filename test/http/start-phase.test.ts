/**
 * The ProbNES start phase through the API (docs/ALGORITHM.md §29, docs/parallel-workers.md): the stencil
 * is generation 0 and goes out as one batch; then a generation is one result, so a worker asking one trial
 * at a time gets each of the model's points from every result so far; several workers asking at once all
 * get a point without waiting; the declared max_trials sizes the phase.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPhaseLength } from '../../src/engine/strategies/probnes-params.js';
import { branin, braninStudy, fastOptions, loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await loopApp());
});
afterEach(async () => {
  await app.close();
});

type Trial = { trial_id: number; generation: number; parameters: Record<string, number> };
type Answer = { trials: Trial[]; generation: number; generation_size: number; reason: string | null };

async function create(overrides: Record<string, unknown> = {}): Promise<{ id: string; options: Record<string, unknown> }> {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('prob-cmaes', { options: fastOptions('prob-cmaes'), ...overrides }) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function ask(id: string, count: number, client: string): Promise<Answer> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}&client_id=${client}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function report(id: string, trials: Trial[]): Promise<void> {
  const observations = trials.map((t) => ({ trial_id: t.trial_id, value: branin(t.parameters) }));
  const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } });
  expect(res.statusCode, res.body).toBe(200);
}

async function engineParams(id: string): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/export` });
  expect(res.statusCode, res.body).toBe(200);
  const states = res.json().engine_states as { state: { params: Record<string, unknown> } }[];
  return states[states.length - 1]!.state.params;
}

describe('the start phase over HTTP (ALGORITHM.md §29)', () => {
  it('is on for a new study (effective option start_phase: powell), and its length comes from max_trials and d', async () => {
    const open = await create();
    expect(open.options.start_phase).toBe('powell');
    expect(await engineParams(open.id)).toMatchObject({ startPhase: 'powell', startPhaseLength: startPhaseLength(2, null) });
    const declared = await create({ max_trials: 12 });
    expect(await engineParams(declared.id)).toMatchObject({ startPhaseLength: startPhaseLength(2, 12) });
    expect(startPhaseLength(2, 12)).not.toBe(startPhaseLength(2, null));
    const off = await create({ options: { ...fastOptions('prob-cmaes'), start_phase: 'off' } });
    expect(await engineParams(off.id)).toMatchObject({ startPhase: 'off', startPhaseLength: 0 });
  });

  it('a sequential worker: the stencil is generation 0 (5 points at d = 2), then one result per generation', async () => {
    const { id } = await create({ max_trials: 20 });
    const seen: Answer[] = [];
    for (let k = 0; k < 12; k++) {
      const a = await ask(id, 1, 'solo');
      expect(a.trials).toHaveLength(1);
      seen.push(a);
      await report(id, a.trials);
    }
    expect(seen.slice(0, 5).every((a) => a.generation === 0 && a.generation_size === 5)).toBe(true);
    // After the stencil each result is a generation of its own: generation 1, 2, … for the 6th, 7th, … trial.
    seen.slice(5).forEach((a, i) => {
      expect(a.generation).toBe(1 + i);
      expect(a.generation_size).toBe(1);
    });
    // The stencil: the prior mean and ± one prior standard deviation along each parameter (in its units).
    const stencil = seen.slice(0, 5).map((a) => a.trials[0]!.parameters);
    const [c, ...rest] = stencil;
    expect(rest.filter((p) => p.x2 === c!.x2).map((p) => p.x1 - c!.x1).sort((a, b) => a - b)).toHaveLength(2);
    expect(rest.filter((p) => p.x1 === c!.x1).map((p) => p.x2 - c!.x2).sort((a, b) => a - b)).toHaveLength(2);
  });

  it('several workers asking at once during the phase all get a point at once, and every result feeds the model', async () => {
    const { id } = await create({ max_trials: 40 });
    // The stencil between three workers, each holding one trial at a time: nobody waits for anybody.
    const stencil: Trial[] = [];
    for (const w of ['w1', 'w2', 'w3']) stencil.push(...(await ask(id, 1, w)).trials);
    await report(id, stencil);
    for (const w of ['w1', 'w2']) stencil.push(...(await ask(id, 1, w)).trials);
    expect(new Set(stencil.map((t) => t.trial_id)).size).toBe(5);
    expect(stencil.every((t) => t.generation === 0)).toBe(true);
    await report(id, stencil.slice(3));
    // Generation 1: the model's point to w1, points that serve it to w2 and w3, all handed out now.
    const [a1, a2, a3] = [await ask(id, 1, 'w1'), await ask(id, 1, 'w2'), await ask(id, 1, 'w3')];
    for (const a of [a1, a2, a3]) {
      expect(a.trials).toHaveLength(1);
      expect(a.generation).toBe(1);
    }
    const keys = [a1, a2, a3].map((a) => JSON.stringify(a.trials[0]!.parameters));
    expect(new Set(keys).size).toBe(3);
    // w3 reports first: the generation advances on its result (no wait for the model's point)…
    await report(id, a3.trials);
    const next = await ask(id, 1, 'w3');
    expect(next.generation).toBe(2);
    // …and the late results of w1 and w2 are kept and counted.
    await report(id, [...a1.trials, ...a2.trials]);
    const study = (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
    expect(study.trial_counts.COMPLETED).toBe(8);
  });
});
