/**
 * A study document an earlier release exported still imports and continues: its ProbNES options are
 * the full option set of that release (ablation switches and retired options included, as every
 * ProbNES study then stored its effective options) and its engine states are version 1 (options
 * instead of parameters). The option set is the one the version-1 fixture recorded from that release
 * (test/fixtures/states/v1/prob-cmaes-default.json); the document is this release's export of the
 * same study rewritten into that form, so the imported copy must hand out exactly the original's next
 * points (the migration resolves the same parameters).
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateFixture } from '../fixtures/states/record.js';
import { makeTestApp, studyBody } from '../helpers/app.js';

const v1 = JSON.parse(readFileSync(new URL('../fixtures/states/v1/prob-cmaes-default.json', import.meta.url), 'utf8')) as StateFixture;
const OLD_OPTIONS = (v1.state as unknown as { options: Record<string, unknown> }).options;
const f = (p: Record<string, number>) => (p.x! - 0.5) ** 2 + (Math.log(p.lr!) + 4) ** 2 / 10;

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

const suggest = (id: string, client: string) => app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=${client}` });
const observe = (id: string, obs: unknown[]) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });

/** This release's export rewritten as the release that wrote version-1 states exported it. */
function asOlderRelease(doc: Record<string, any>): Record<string, any> {
  return {
    ...doc,
    study: { ...doc.study, options: OLD_OPTIONS },
    engine_states: doc.engine_states.map((e: Record<string, any>) => {
      const { params: _params, ...rest } = e.state;
      return { ...e, version: 1, state: { ...rest, version: 1, options: OLD_OPTIONS } };
    }),
  };
}

describe('a document of an earlier release', () => {
  it('holds options this release reserves to benchmarks or retired (mean_basis, optimum_gate)', () => {
    expect(OLD_OPTIONS).toMatchObject({ include_mean: true, mean_basis: 'count', optimum_gate: 'basis' });
  });

  it('imports, and the copy hands out the same next points as the original', async () => {
    // The original is a study that release could have run: no start phase (ALGORITHM.md §29; a state of
    // an older release reads as start_phase off), natural-gradient generations of batch_size.
    const a: string = (await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'prob-cmaes', batch_size: 3, seed: 5, options: { start_phase: 'off' } }) })).json().id;
    for (let g = 0; g < 4; g++) {
      const trials = (await suggest(a, 'w1')).json().trials as { trial_id: number; parameters: Record<string, number> }[];
      expect((await observe(a, trials.map((t) => ({ trial_id: t.trial_id, value: f(t.parameters) })))).statusCode).toBe(200);
    }
    const doc = (await app.inject({ method: 'GET', url: `/v1/studies/${a}/export` })).json();
    expect(doc.engine_states.at(-1).state.gp.quad).not.toBeNull(); // the quadratic mean is in use: a real default-profile state
    const old = asOlderRelease(doc);
    const imported = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: old });
    expect(imported.statusCode, imported.body).toBe(201);
    const b: string = imported.json().id;
    for (let round = 0; round < 2; round++) {
      const ra = (await suggest(a, 'w2')).json();
      const rb = (await suggest(b, 'w2')).json();
      const strip = (r: { trials: Record<string, unknown>[] }) => r.trials.map((t) => [t.trial_id, t.parameters, t.generation]);
      expect(strip(rb)).toEqual(strip(ra));
      const obs = ra.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: f(t.parameters) }));
      await observe(a, obs);
      await observe(b, obs);
    }
  });

  it('a version-1 state without the options it always held is refused at its path', async () => {
    const a: string = (await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'prob-cmaes', batch_size: 3, seed: 5 }) })).json().id;
    const old = asOlderRelease((await app.inject({ method: 'GET', url: `/v1/studies/${a}/export` })).json());
    delete old.engine_states[0].state.options;
    const res = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: old });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({ path: '/engine_states/0/state', message: expect.stringMatching(/not a prob-cmaes state of version 1: .*no options/) });
  });

  it('a new study still cannot set a benchmark-only or retired option', async () => {
    for (const options of [{ include_mean: false }, { mean_basis: 'count' }]) {
      const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ options }) });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].message).toMatch(/not an option of method prob-cmaes/);
    }
  });
});
