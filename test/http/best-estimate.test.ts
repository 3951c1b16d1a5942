/**
 * /best's `estimated` names a configuration the method supports. BO and πBO have no search
 * distribution: their state's `mean` is the best point's continuous part, and the choices' prior
 * never changes, so the distribution's centre paired the best point's numbers with the prior's most
 * likely choice, a configuration never evaluated. Their estimate is now the evaluated configuration
 * with the lowest posterior mean (bo-core.ts `recommendation`), with the model's prediction there.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getStrategy, Rng } from '../../src/engine/index.js';
import { estimateBo, type BoState } from '../../src/engine/strategies/bo-core.js';
import { makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.app.close();
});

// The prior puts 80% on 'adam'; the objective is 1 lower for 'sgd' everywhere.
const study = (method: string) => ({
  name: 'best-choice-not-prior-mode',
  parameters: [
    { name: 'optimizer', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'], prior: { probabilities: [0.8, 0.1, 0.1] } },
    { name: 'x', bounds: [-2, 2] },
    { name: 'y', bounds: [-2, 2] },
  ],
  method,
  batch_size: 2,
  seed: 11,
  options: { candidates: 200, mc_samples: 32 },
});
const f = (p: Record<string, unknown>) => (p.optimizer === 'sgd' ? 0 : 1) + ((p.x as number) - 0.5) ** 2 + ((p.y as number) + 0.3) ** 2;

describe.each(['bo', 'pibo'])('%s: /best.estimated on a mixed space', (method) => {
  it('is an evaluated configuration with the best choice and the model\'s prediction there, not the prior\'s mode', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/studies', payload: study(method) });
    expect(created.statusCode, created.body).toBe(201);
    const id: string = created.json().id;
    const evaluated: { parameters: Record<string, unknown>; value: number }[] = [];
    // The first batch is drawn from the prior (mostly 'adam'); 'sgd' is then found by the model.
    // An 'sgd' point is reported as an external observation so the test does not depend on when.
    await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ parameters: { optimizer: 'sgd', x: 1.5, y: 1 }, value: f({ optimizer: 'sgd', x: 1.5, y: 1 }) }] } });
    evaluated.push({ parameters: { optimizer: 'sgd', x: 1.5, y: 1 }, value: f({ optimizer: 'sgd', x: 1.5, y: 1 }) });
    for (let g = 0; g < 6; g++) {
      const s = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w` })).json();
      const obs = s.trials.map((tr: { trial_id: number; parameters: Record<string, unknown> }) => {
        evaluated.push({ parameters: tr.parameters, value: f(tr.parameters) });
        return { trial_id: tr.trial_id, value: f(tr.parameters) };
      });
      const r = await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
      expect(r.statusCode, r.body).toBe(200);
    }
    const best = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/best` })).json();
    expect(best.observed.parameters.optimizer).toBe('sgd');
    const est = best.estimated;
    // A configuration the model has seen: exactly one of the evaluated ones.
    const match = evaluated.find((e) => JSON.stringify(e.parameters) === JSON.stringify(est.parameters));
    expect(match, JSON.stringify(est.parameters)).toBeDefined();
    expect(est.parameters.optimizer).toBe('sgd');
    // The model's prediction at it, in the study's units: close to what was observed there (a
    // noise-free objective; the GP's noise floor and smoothing leave a small difference).
    expect(Number.isFinite(est.predicted_value)).toBe(true);
    expect(est.predicted_std).toBeGreaterThanOrEqual(0);
    expect(Math.abs(est.predicted_value - match!.value)).toBeLessThan(0.25);
    // The in-sample minimiser of the posterior mean on a noise-free objective is near the observed best.
    expect(match!.value - best.observed.value).toBeLessThan(0.25);
  });
});

describe('estimateBo on a stored state', () => {
  const told = (): BoState => {
    const bo = getStrategy('bo');
    let s = bo.init({ dim: 3, batchSize: 2, categories: [[0.8, 0.1, 0.1]], options: { candidates: 100, mc_samples: 16 } }, Rng.fromSeed(7));
    const history = [
      { x: [0.1, -0.2, 0], y: 1.3 },
      { x: [0.9, 0.4, 1], y: 0.2 },
      { x: [-0.5, 0.5, 2], y: 1.9 },
      { x: [0.8, 0.3, 1], y: 0.25 },
    ];
    s = bo.tell(s, { history, pending: [] } as never);
    return s as BoState;
  };

  it('names the told point with the lowest posterior mean, choice included', () => {
    const s = told();
    const e = estimateBo(s);
    expect(e.point).toBeDefined();
    expect(e.point![2]).toBe(1); // both low values have choice 1; the prior's mode is 0
    expect(e.predicted!).toBeLessThan(0.6);
  });

  it('ignores a recommendation that is not a point of the state (an imported state may hold anything)', () => {
    const s = told();
    for (const bad of [
      { ...s.recommended!, x: [0.1, 0.2, 3] }, // choice index past the last choice
      { ...s.recommended!, x: [0.1, 0.2, 0.5] }, // not an index
      { ...s.recommended!, x: [0.1, 0.2] }, // wrong length
      { ...s.recommended!, predicted: Number.NaN },
      { ...s.recommended!, predicted_std: -1 },
    ]) {
      expect(estimateBo({ ...s, recommended: bad })).toEqual({ predicted: null, predicted_std: null });
    }
    expect(estimateBo({ ...s, recommended: undefined })).toEqual({ predicted: null, predicted_std: null });
  });
});
