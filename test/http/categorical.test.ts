/**
 * Categorical parameters through HTTP: validation at JSON pointers, every method accepts them, and a
 * whole loop for every method: suggested values are choices, external observations by choice,
 * reports, export and import. (The refusal a method without them would give is checked on a
 * stand-in in test/mutation/study-spec-rules.test.ts.)
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getStrategy, METHOD_NAMES } from '../../src/engine/index.js';
import { makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.app.close();
});

const SUPPORTING = METHOD_NAMES.filter((m) => getStrategy(m).categorical === true);

const mixed = (overrides: Record<string, unknown> = {}) => ({
  name: 'mixed',
  parameters: [
    { name: 'optimizer', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'], prior: { probabilities: [0.6, 0.2, 0.2] } },
    { name: 'lr', scale: 'log', bounds: [1e-4, 1] },
    { name: 'layers', type: 'categorical', choices: [1, 2, 4] },
    { name: 'x', bounds: [-2, 2] },
  ],
  method: 'random',
  batch_size: 2,
  seed: 3,
  ...overrides,
});

const create = (body: unknown) => t.app.inject({ method: 'POST', url: '/v1/studies', payload: body as Record<string, unknown> });

describe('creating a study with categorical parameters', () => {
  it('every method accepts them', () => {
    expect(SUPPORTING).toEqual([...METHOD_NAMES]);
  });

  it('echoes each categorical parameter with its effective prior (uniform by default), the joint prior over the numeric ones', async () => {
    const res = await create(mixed());
    expect(res.statusCode, res.body).toBe(201);
    const s = res.json();
    expect(s.parameters[0]).toEqual({ name: 'optimizer', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'], prior: { probabilities: [0.6, 0.2, 0.2] } });
    expect(s.parameters[2].prior.probabilities).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect(s.prior.mean).toHaveLength(2); // lr and x
  });

  it('reports each bad field at its JSON pointer', async () => {
    const res = await create({
      name: 'bad',
      parameters: [
        { name: 'a', type: 'categorical', choices: [] },
        { name: 'b', type: 'categorical', choices: ['x', 'y', 'x'] },
        { name: 'c', type: 'categorical', choices: ['x', 'y'], prior: { probabilities: [0.5, 0.3] } },
        { name: 'd', type: 'categorical', choices: ['x', 'y'], prior: { probabilities: [1] } },
        { name: 'e', type: 'categorical', choices: ['x', 'y'], prior: { probabilities: [1, 0] } },
        { name: 'f', type: 'categorical', choices: Array.from({ length: 101 }, (_, i) => i) },
        { name: 'g', type: 'categorical', choices: ['x'], bounds: [0, 1] },
      ],
      method: 'random',
    });
    expect(res.statusCode).toBe(400);
    const paths = res.json().errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/parameters/0/choices', '/parameters/4/prior/probabilities/1', '/parameters/5/choices', '/parameters/6/bounds']));
    // The cross-field checks run once the structure is valid.
    const res2 = await create({
      name: 'bad2',
      parameters: [
        { name: 'b', type: 'categorical', choices: ['x', 'y', 'x'] },
        { name: 'c', type: 'categorical', choices: ['x', 'y'], prior: { probabilities: [0.5, 0.3] } },
        { name: 'd', type: 'categorical', choices: ['x', 'y'], prior: { probabilities: [1] } },
      ],
      method: 'random',
    });
    expect(res2.statusCode).toBe(400);
    expect(res2.json().errors).toEqual(expect.arrayContaining([
      { path: '/parameters/0/choices/2', message: expect.stringContaining('duplicates choice 0') },
      { path: '/parameters/1/prior/probabilities', message: expect.stringContaining('sum to 1') },
      { path: '/parameters/2/prior/probabilities', message: expect.stringContaining('one probability per choice (2)') },
    ]));
  });

  it('1 and "1" are different choices; a fitted prior refuses categorical parameters', async () => {
    expect((await create(mixed({ parameters: [{ name: 'k', type: 'categorical', choices: [1, '1', true] }] }))).statusCode).toBe(201);
    const fitted = await create(mixed({ prior: { from_points: [{ lr: 0.01, x: 0 }, { lr: 0.1, x: 1 }] } }));
    expect(fitted.statusCode).toBe(400);
    expect(fitted.json().errors[0].path).toBe('/parameters/0/type');
  });

  it('a joint prior covers the numeric parameters only', async () => {
    const ok = await create(mixed({ prior: { mean: [-3, 0], covariance: [[1, 0], [0, 1]] } }));
    expect(ok.statusCode, ok.body).toBe(201);
    const bad = await create(mixed({ prior: { mean: [-3, 0, 0, 0], covariance: [[1, 0], [0, 1]] } }));
    expect(bad.json().errors).toContainEqual({ path: '/prior/mean', message: expect.stringContaining('numeric parameter') });
  });
});

describe.each(SUPPORTING)('the loop with categorical parameters (%s)', (method) => {
  it('hands out choices, takes observations by choice, reports, and survives export and import', async () => {
    const body = mixed({ method, options: method === 'bo' || method === 'pibo' ? { candidates: 200, mc_samples: 32 } : {} });
    const id: string = (await create(body)).json().id;
    const f = (p: Record<string, unknown>) => (p.optimizer === 'sgd' ? 0 : 1) + (p.layers === 2 ? 0 : 0.5) + Math.log10(p.lr as number) ** 2 / 10 + (p.x as number) ** 2;
    for (let g = 0; g < 4; g++) {
      const s = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w` })).json();
      expect(s.trials).toHaveLength(2);
      for (const tr of s.trials) {
        expect(['adam', 'sgd', 'rmsprop']).toContain(tr.parameters.optimizer);
        expect([1, 2, 4]).toContain(tr.parameters.layers);
        expect(tr.parameters.lr).toBeGreaterThanOrEqual(1e-4);
      }
      const obs = s.trials.map((tr: { trial_id: number; parameters: Record<string, unknown> }) => ({ trial_id: tr.trial_id, value: f(tr.parameters) }));
      const r = await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
      expect(r.statusCode, r.body).toBe(200);
    }
    // An external observation by choice; a value that is not a choice is a 400 at its pointer.
    const ext = await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ parameters: { optimizer: 'sgd', lr: 0.01, layers: 2, x: 0 }, value: 0.4 }] } });
    expect(ext.statusCode, ext.body).toBe(200);
    const bad = await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ parameters: { optimizer: 'lbfgs', lr: 0.01, layers: '2', x: 0 }, value: 0.4 }] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['/observations/0/parameters/layers', '/observations/0/parameters/optimizer']);

    const best = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/best` })).json();
    expect(best.observed.parameters).toEqual({ optimizer: 'sgd', lr: 0.01, layers: 2, x: 0 });
    expect(['adam', 'sgd', 'rmsprop']).toContain(best.estimated.parameters.optimizer);
    const dist = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/distribution` })).json();
    expect(dist.probabilities.optimizer).toHaveLength(3);
    expect(dist.probabilities.optimizer.reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(1, 12);
    expect(dist.scale).toEqual(['log', 'linear']);
    expect(dist.covariance).toHaveLength(2);

    // Export, import, and the copy hands out the same next suggestions.
    const doc = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json();
    const imp = await t.app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imp.statusCode, imp.body).toBe(201);
    const copy: string = imp.json().id;
    const next = async (sid: string) => (await t.app.inject({ method: 'GET', url: `/v1/studies/${sid}/suggestions?count=2&client_id=z` })).json().trials.map((tr: { parameters: unknown }) => tr.parameters);
    expect(await next(copy)).toEqual(await next(id));
  });
});

describe('import checks categorical values', () => {
  it('a numeric study\'s engine state with a categorical distribution is refused at its pointer', async () => {
    const id: string = (await create({ name: 'num', parameters: [{ name: 'x', bounds: [-1, 1] }], method: 'cmaes', batch_size: 2 })).json().id;
    const s = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w` })).json();
    await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: s.trials.map((tr: { trial_id: number }) => ({ trial_id: tr.trial_id, value: 1 })) } });
    const doc = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json();
    const k = doc.engine_states.length - 1;
    doc.engine_states[k].state.categorical = [];
    const imp = await t.app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imp.statusCode).toBe(400);
    expect(imp.json().errors).toContainEqual({ path: `/engine_states/${k}/state/categorical`, message: expect.stringContaining('no categorical distribution') });
  });

  it('a trial whose value is not a choice is refused at its pointer', async () => {
    const id: string = (await create(mixed())).json().id;
    const s = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=2&client_id=w` })).json();
    await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: s.trials.map((tr: { trial_id: number }) => ({ trial_id: tr.trial_id, value: 1 })) } });
    const doc = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json();
    doc.trials[0].parameters.optimizer = 'lbfgs';
    const imp = await t.app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imp.statusCode).toBe(400);
    expect(imp.json().errors).toContainEqual({ path: '/trials/0/parameters/optimizer', message: expect.stringContaining('must be one of the choices') });
  });
});

describe('hostile categorical parameters (property test)', () => {
  const choice = fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }));
  const key = (v: unknown) => `${typeof v}:${String(v)}`;
  // Mostly valid categorical parameters (distinct choices, probabilities that are a distribution),
  // with hostile variants mixed in: duplicates, wrong lengths, negative or non-normalised probabilities,
  // an empty list, a numeric type with choices.
  const param = fc
    .tuple(
      fc.oneof({ arbitrary: fc.uniqueArray(choice, { minLength: 1, maxLength: 6, selector: key }), weight: 4 }, { arbitrary: fc.array(choice, { maxLength: 6 }), weight: 1 }),
      fc.oneof({ arbitrary: fc.constantFrom('none', 'valid'), weight: 4 }, { arbitrary: fc.array(fc.double({ min: -0.5, max: 1.5, noNaN: true }), { maxLength: 6 }), weight: 1 }),
      fc.constantFrom('categorical', 'categorical', 'categorical', 'categorical', 'categorical', 'float'),
      fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: 6, maxLength: 6 }),
    )
    .map(([choices, prior, type, w]) => {
      const probs = prior === 'valid' ? choices.map((_, i) => w[i]! / choices.reduce<number>((acc, _c, k) => acc + w[k]!, 0)) : prior === 'none' ? undefined : prior;
      return { type, choices, ...(probs ? { prior: { probabilities: probs } } : {}) };
    });
  it('any body is a 201 whose loop works, or a 400 with pointers; never a 500', async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(param, { minLength: 1, maxLength: 3 }), fc.constantFrom(...METHOD_NAMES, ...SUPPORTING), fc.boolean(), async (ps, method, withNumeric) => {
        const named = ps.map((p, i) => ({ name: `p${i}`, ...p }));
        const parameters = withNumeric ? [...named, { name: 'x', bounds: [-1, 1] }] : named;
        const res = await create({ name: 'h', parameters, method, batch_size: 4, options: method === 'bo' || method === 'pibo' ? { candidates: 50, mc_samples: 8 } : {} });
        expect([201, 400], res.body).toContain(res.statusCode);
        if (res.statusCode === 201) created++;
        if (res.statusCode === 400) {
          for (const e of res.json().errors) expect(e.path).toMatch(/^\//);
          return;
        }
        const id = res.json().id as string;
        for (let g = 0; g < 2; g++) {
          const sug = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=4&client_id=w` });
          expect(sug.statusCode, sug.body).toBe(200);
          const obs = sug.json().trials.map((tr: { trial_id: number }, i: number) => ({ trial_id: tr.trial_id, value: i }));
          if (obs.length > 0) expect((await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } })).statusCode).toBe(200);
        }
        for (const r of ['/best', '/distribution', '/history', '/export']) expect((await t.app.inject({ method: 'GET', url: `/v1/studies/${id}${r}` })).statusCode, r).toBe(200);
      }),
      { numRuns: 40, seed: 20261126 },
    );
    // The generator must reach the loop, not only the validation.
    expect(created).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
