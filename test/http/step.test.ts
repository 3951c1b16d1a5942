/**
 * Stepped parameters (`step`, Optuna's) through HTTP: validation at JSON pointers, a high off the
 * grid rounded down, suggestions that are exactly the grid's decimals for every method, a small
 * grid exhausted without repeats, reported values on and off the grid, priors, and export/import.
 *
 * Expected grid values are written as integer ratios (3/10, 35/100): a quotient of two integers is
 * the double nearest the decimal, which is what the server must hand out, computed independently
 * of its own decimal arithmetic.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { METHOD_NAMES } from '../../src/engine/index.js';
import { makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.app.close();
});

type Body = Record<string, unknown>;
const create = (body: Body) => t.app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'stepped', ...body } });
const suggest = async (id: string, count: number, client = 'w') => {
  const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}&client_id=${client}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { trials: { trial_id: number; parameters: Record<string, number> }[]; reason: string | null };
};
const observe = (id: string, observations: unknown[]) => t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } });
const errorsOf = (res: { json(): unknown }) => (res.json() as { errors: { path: string; message: string }[] }).errors;

/** x: 21 values −1, −0.9, …, 1; y: 0.05 + 0.15k up to 2 (high 2.1 is off the grid); n: 0, 5, …, 20. */
const SPACE = [
  { name: 'x', bounds: [-1, 1], step: 0.1 },
  { name: 'y', bounds: [0.05, 2.1], step: 0.15 },
  { name: 'n', type: 'int', bounds: [0, 20], step: 5 },
];
const X_GRID = Array.from({ length: 21 }, (_, k) => (k - 10) / 10);
const Y_GRID = Array.from({ length: 14 }, (_, k) => (5 + 15 * k) / 100);
const N_GRID = [0, 5, 10, 15, 20];
const onGrid = (p: Record<string, number>) => X_GRID.includes(p.x!) && Y_GRID.includes(p.y!) && N_GRID.includes(p.n!);

describe('validation', () => {
  it('refuses a step that is not a positive number, and a step on a categorical parameter, at its pointer', async () => {
    const res = await create({
      parameters: [
        { name: 'a', bounds: [0, 1], step: 0 },
        { name: 'b', bounds: [0, 1], step: -0.5 },
        { name: 'c', type: 'categorical', choices: [1, 2], step: 1 },
        { name: 'd', bounds: [0, 1], step: '0.1' },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const paths = errorsOf(res).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/parameters/0/step', '/parameters/1/step', '/parameters/2/step', '/parameters/3/step']));
    expect(errorsOf(res).find((e) => e.path === '/parameters/0/step')!.message).toContain('> 0');
  });

  it('refuses log scale, a non-integer int step, no bounds, a step wider than the bounds and a grid too fine, each at its pointer', async () => {
    const res = await create({
      parameters: [
        { name: 'log', scale: 'log', bounds: [1e-3, 1], step: 0.1 },
        { name: 'intlog', type: 'int', scale: 'log', bounds: [1, 100], step: 2 },
        { name: 'half', type: 'int', bounds: [0, 10], step: 1.5 },
        { name: 'unbounded', step: 0.1, prior: { mean: 0, std: 1 } },
        { name: 'wide', bounds: [0, 1], step: 1.5 },
        { name: 'fine', bounds: [0, 1], step: 1e-9 },
        { name: 'ok_intlog', type: 'int', scale: 'log', bounds: [1, 100], step: 1 },
      ],
    });
    expect(res.statusCode).toBe(400);
    const byPath = Object.fromEntries(errorsOf(res).map((e) => [e.path, e.message]));
    expect(Object.keys(byPath).sort()).toEqual(['/parameters/0/step', '/parameters/1/step', '/parameters/2/step', '/parameters/3/step', '/parameters/4/step', '/parameters/5/step']);
    expect(byPath['/parameters/0/step']).toContain('log');
    expect(byPath['/parameters/1/step']).toContain('other than 1');
    expect(byPath['/parameters/2/step']).toContain('integer');
    expect(byPath['/parameters/3/step']).toContain('needs bounds');
    expect(byPath['/parameters/4/step']).toContain('at most high − low');
    expect(byPath['/parameters/5/step']).toContain('at least 1e-8');
  });

  it('measures the width in decimal: [0.1, 0.3] with step 0.2 is a grid of two values (0.3 − 0.1 < 0.2 in binary)', async () => {
    const res = await create({ parameters: [{ name: 'x', bounds: [0.1, 0.3], step: 0.2 }], method: 'random', batch_size: 1 });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().parameters[0]).toMatchObject({ bounds: [0.1, 0.3], step: 0.2 });
  });
});

describe('the study resource', () => {
  it('rounds a high off the grid down to the last grid value (Optuna\'s rule) and derives the default prior from it', async () => {
    const res = await create({
      parameters: [
        { name: 'x', bounds: [0, 1.15], step: 0.4 },
        { name: 'n', type: 'int', bounds: [2, 11], step: 3 },
        { name: 'c', bounds: [0, 1] },
        { name: 'i', type: 'int', bounds: [0, 3] },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const [x, n, c, i] = res.json().parameters;
    // 1.15 / 0.4 = 2.875: the last grid value is 0.8 (not 1.2, the nearest one above).
    expect(x).toMatchObject({ bounds: [0, 0.8], step: 0.4, prior: { mean: 0.4, std: 0.2 } });
    expect(n).toMatchObject({ bounds: [2, 11], step: 3 });
    // Defaults are echoed: a continuous float has none, an int steps by 1.
    expect(c.step).toBeNull();
    expect(i.step).toBe(1);
  });

  it('a prior mean between the rounded high and the given one is refused at its pointer', async () => {
    const res = await create({ parameters: [{ name: 'x', bounds: [0, 1.15], step: 0.4, prior: { mean: 1, std: 0.3 } }] });
    expect(res.statusCode).toBe(400);
    expect(errorsOf(res)).toEqual([{ path: '/parameters/0/prior/mean', message: expect.stringContaining('[0, 0.8]') }]);
  });
});

describe.each(METHOD_NAMES)('suggestions on the grid (%s)', (method) => {
  it('hands out exactly the grid\'s decimals, generation after generation, and reports on the grid', async () => {
    const options = method === 'bo' || method === 'pibo' ? { candidates: 200, mc_samples: 16 } : {};
    const res = await create({ parameters: SPACE, method, batch_size: 4, seed: 11, options });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const f = (p: Record<string, number>) => (p.x! - 0.3) ** 2 + (p.y! - 1.1) ** 2 + ((p.n! - 10) / 10) ** 2;
    const seen: Record<string, number>[] = [];
    for (let g = 0; g < 4; g++) {
      const s = await suggest(id, 4);
      expect(s.trials.length).toBeGreaterThan(0);
      seen.push(...s.trials.map((tr) => tr.parameters));
      const r = await observe(id, s.trials.map((tr) => ({ trial_id: tr.trial_id, value: f(tr.parameters) })));
      expect(r.statusCode, r.body).toBe(200);
    }
    const off = seen.filter((p) => !onGrid(p));
    expect(off, JSON.stringify(off)).toEqual([]);
    // Not just the corners: the search moves over the grid.
    expect(new Set(seen.map((p) => p.x)).size).toBeGreaterThan(2);
    const best = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/best` })).json();
    expect(onGrid(best.observed.parameters)).toBe(true);
    // The estimate is a point one can evaluate: on the grid too.
    expect(onGrid(best.estimated.parameters), JSON.stringify(best.estimated.parameters)).toBe(true);
  });
});

describe.each(['cmaes', 'prob-cmaes', 'bo'])('stepped next to categorical parameters (%s)', (method) => {
  it('hands out grid values and choices: each grid is its own parameter\'s, whatever the order', async () => {
    const parameters = [{ name: 'opt', type: 'categorical', choices: ['a', 'b', 'c'] }, SPACE[1], { name: 'flag', type: 'categorical', choices: [true, false] }, SPACE[2], SPACE[0]];
    const options = method === 'bo' ? { candidates: 100, mc_samples: 16 } : {};
    const res = await create({ parameters, method, batch_size: 4, seed: 9, options });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    for (let g = 0; g < 3; g++) {
      const s = await suggest(id, 4);
      for (const tr of s.trials) expect(onGrid(tr.parameters), JSON.stringify(tr.parameters)).toBe(true);
      expect((await observe(id, s.trials.map((tr) => ({ trial_id: tr.trial_id, value: tr.parameters.x! ** 2 + tr.parameters.n! })))).statusCode).toBe(200);
    }
  });
});

describe('no wasted repeats on the grid', () => {
  // 5 × 3 = 15 configurations: x ∈ {0, 0.25, 0.5, 0.75, 1}, n ∈ {1, 3, 5}.
  const SMALL = [
    { name: 'x', bounds: [0, 1], step: 0.25 },
    { name: 'n', type: 'int', bounds: [1, 5], step: 2 },
  ];
  const f = (p: Record<string, number>) => (p.x! - 0.5) ** 2 + (p.n! - 3) ** 2;

  async function exhaust(id: string, max: number) {
    const seen: string[] = [];
    let last = { trials: [] as unknown[], reason: null as string | null };
    for (let i = 0; i < max; i++) {
      last = await suggest(id, 1);
      if (last.trials.length === 0) break;
      const tr = last.trials[0] as { trial_id: number; parameters: Record<string, number> };
      expect([0, 0.25, 0.5, 0.75, 1]).toContain(tr.parameters.x);
      expect([1, 3, 5]).toContain(tr.parameters.n);
      seen.push(JSON.stringify([tr.parameters.x, tr.parameters.n]));
      expect((await observe(id, [{ trial_id: tr.trial_id, value: f(tr.parameters) }])).statusCode).toBe(200);
    }
    return { seen, last };
  }

  it('random hands out each of the 15 configurations once, then answers converged and completes the study', async () => {
    // Priors wide enough that every configuration is drawn with probability ≥ 5% (the default prior
    // puts 1% on a corner, which 63 redraws may miss: then the study converges before the grid is done).
    const wide = [{ ...SMALL[0], prior: { mean: 0.5, std: 0.5 } }, { ...SMALL[1], prior: { mean: 3, std: 2 } }];
    const id = (await create({ parameters: wide, method: 'random', batch_size: 1, seed: 2 })).json().id as string;
    const { seen, last } = await exhaust(id, 40);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(15);
    expect(last.reason).toBe('converged');
    const study = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
    expect(study).toMatchObject({ state: 'COMPLETED', reason: 'converged' });
  });

  it.each(['prob-cmaes', 'cmaes'])('%s repeats no configuration of the grid and converges', async (method) => {
    const id = (await create({ parameters: SMALL, method, batch_size: 2, seed: 1 })).json().id as string;
    const { seen, last } = await exhaust(id, 40);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeLessThanOrEqual(15);
    expect(last.reason).toBe('converged');
  });
});

describe('reported values', () => {
  it('takes values on the grid (the float noise of 0.1·3 as 0.3) and refuses others at their pointer, naming the nearest grid values', async () => {
    const id = (await create({ parameters: SPACE, method: 'random', batch_size: 2, seed: 3 })).json().id as string;
    const ok = await observe(id, [
      { parameters: { x: 0.1 * 3, y: 0.05 + 0.15 * 3, n: 15 }, value: 1 },
      { parameters: { x: -1, y: 2, n: 0 }, value: 2 },
    ]);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().trials.map((tr: { parameters: unknown }) => tr.parameters)).toEqual([{ x: 3 / 10, y: 50 / 100, n: 15 }, { x: -1, y: 2, n: 0 }]);

    const bad = await observe(id, [{ parameters: { x: 0.35, y: 0.1, n: 4 }, value: 1 }]);
    expect(bad.statusCode).toBe(400);
    const byPath = Object.fromEntries(errorsOf(bad).map((e) => [e.path, e.message]));
    expect(Object.keys(byPath).sort()).toEqual(['/observations/0/parameters/n', '/observations/0/parameters/x', '/observations/0/parameters/y']);
    expect(byPath['/observations/0/parameters/x']).toContain('nearest: 0.3 or 0.4');
    expect(byPath['/observations/0/parameters/y']).toContain('nearest: 0.05 or 0.2');
    expect(byPath['/observations/0/parameters/n']).toContain('nearest: 0 or 5');
    // The bounds come first: 2.05 is above the rounded high (2), not merely off the grid.
    const above = await observe(id, [{ parameters: { x: 0, y: 2.05, n: 0 }, value: 1 }]);
    expect(errorsOf(above)).toEqual([{ path: '/observations/0/parameters/y', message: 'must lie within the bounds [0.05, 2]' }]);
  });

  it('a value stored as its grid value counts as that configuration for the repeat check', async () => {
    const id = (await create({ parameters: [{ name: 'x', bounds: [0, 0.2], step: 0.1 }], method: 'random', batch_size: 1, seed: 4 })).json().id as string;
    expect((await observe(id, [{ parameters: { x: 0.1 * 2 }, value: 0 }, { parameters: { x: 0.1 }, value: 0 }])).statusCode).toBe(200);
    const s = await suggest(id, 3);
    expect(s.trials.map((tr) => tr.parameters.x)).toEqual([0]);
  });
});

describe('priors', () => {
  it('a warm start copies only the source\'s observations that lie on this study\'s grid, as grid values', async () => {
    const src = (await create({ parameters: [{ name: 'x', bounds: [0, 1] }, { name: 'n', type: 'int', bounds: [0, 10] }], method: 'random', batch_size: 1 })).json().id as string;
    const pts = [
      { x: 0.3, n: 4 },
      { x: 0.35, n: 4 },
      { x: 0.1 + 0.2, n: 6 },
      { x: 0.7, n: 5 },
    ];
    expect((await observe(src, pts.map((p, i) => ({ parameters: p, value: i })))).statusCode).toBe(200);
    const res = await create({
      parameters: [{ name: 'x', bounds: [0, 1], step: 0.1 }, { name: 'n', type: 'int', bounds: [0, 10], step: 2 }],
      prior: { from_study: { study_id: src, top_fraction: 1, include_observations: true } },
      method: 'prob-cmaes',
    });
    expect(res.statusCode, res.body).toBe(201);
    const s = res.json();
    expect(s.prior.source.observations_copied).toBe(2);
    const trials = (await t.app.inject({ method: 'GET', url: `/v1/studies/${s.id}/trials` })).json().trials;
    expect(trials.map((tr: { parameters: unknown }) => tr.parameters)).toEqual([{ x: 3 / 10, n: 4 }, { x: 3 / 10, n: 6 }]);
    const sug = await suggest(s.id, 3);
    for (const tr of sug.trials) {
      expect(Array.from({ length: 11 }, (_, k) => k / 10)).toContain(tr.parameters.x);
      expect([0, 2, 4, 6, 8, 10]).toContain(tr.parameters.n);
    }
  });

  it('a warm start with a step the checks refuse is a 400 at the step, whatever the source holds', async () => {
    const src = (await create({ parameters: [{ name: 'x', bounds: [0, 1e10] }], method: 'random', batch_size: 1 })).json().id as string;
    expect((await observe(src, [{ parameters: { x: 1 }, value: 0 }, { parameters: { x: 2 }, value: 1 }])).statusCode).toBe(200);
    const res = await create({ parameters: [{ name: 'x', bounds: [0, 1e10], step: 1e-300 }], prior: { from_study: { study_id: src, include_observations: true } } });
    expect(res.statusCode, res.body).toBe(400);
    expect(errorsOf(res).map((e) => e.path)).toEqual(['/parameters/0/step']);
  });

  it('a prior fitted to points off the grid is a prior like any other; suggestions stay on the grid', async () => {
    const res = await create({
      parameters: [{ name: 'x', bounds: [0, 1], step: 0.1 }, { name: 'y', bounds: [0, 1] }],
      prior: { from_points: [{ x: 0.33, y: 0.2 }, { x: 0.41, y: 0.3 }, { x: 0.27, y: 0.25 }] },
      method: 'prob-cmaes',
      seed: 5,
    });
    expect(res.statusCode, res.body).toBe(201);
    const s = await suggest(res.json().id, 3);
    for (const tr of s.trials) expect(Array.from({ length: 11 }, (_, k) => k / 10)).toContain(tr.parameters.x);
  });
});

describe('export and import', () => {
  async function studyWithData(): Promise<string> {
    const id = (await create({ parameters: SPACE, method: 'cmaes', batch_size: 4, seed: 8 })).json().id as string;
    for (let g = 0; g < 2; g++) {
      const s = await suggest(id, 4);
      expect((await observe(id, s.trials.map((tr, i) => ({ trial_id: tr.trial_id, value: i })))).statusCode).toBe(200);
    }
    return id;
  }
  const exportOf = async (id: string) => (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json();
  const importOf = (doc: unknown) => t.app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc as Body });

  it('carries the step: the copy has the same parameters and hands out the same next suggestions', async () => {
    const id = await studyWithData();
    const doc = await exportOf(id);
    expect(doc.study.parameters.map((p: { step: number }) => p.step)).toEqual([0.1, 0.15, 5]);
    const imp = await importOf(doc);
    expect(imp.statusCode, imp.body).toBe(201);
    const copy = imp.json();
    const original = (await t.app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
    expect(copy.parameters).toEqual(original.parameters);
    const next = async (sid: string) => (await suggest(sid, 4, 'z')).trials.map((tr) => tr.parameters);
    const a = await next(copy.id);
    expect(a).toEqual(await next(id));
    expect(a.every(onGrid)).toBe(true);
  });

  it('refuses a trial off the grid (even by float noise) and a high off the grid, at their pointers', async () => {
    const doc = await exportOf(await studyWithData());
    doc.trials[0].parameters.x = 0.1 * 3;
    doc.trials[1].parameters.n = 7;
    doc.study.parameters[1].bounds[1] = 2.1;
    const imp = await importOf(doc);
    expect(imp.statusCode).toBe(400);
    const paths = errorsOf(imp).map((e) => e.path);
    // A study the checks refuse stops them before its trials; its error comes alone.
    expect(paths).toEqual(['/study/parameters/1/bounds/1']);
    expect(errorsOf(imp)[0]!.message).toContain('the last one of these bounds is 2');
    doc.study.parameters[1].bounds[1] = 2;
    const again = await importOf(doc);
    expect(again.statusCode).toBe(400);
    expect(errorsOf(again).map((e) => e.path).sort()).toEqual(['/trials/0/parameters/x', '/trials/1/parameters/n']);
    expect(errorsOf(again).find((e) => e.path === '/trials/0/parameters/x')!.message).toContain('nearest: 0.3');
  });

  it('a document without steps (an older server\'s) imports with the defaults: a continuous float, an int by 1', async () => {
    const id = (await create({ parameters: [{ name: 'x', bounds: [0, 1] }, { name: 'n', type: 'int', bounds: [0, 9] }], method: 'random', batch_size: 1, seed: 1 })).json().id as string;
    const doc = await exportOf(id);
    for (const p of doc.study.parameters) delete p.step;
    const imp = await importOf(doc);
    expect(imp.statusCode, imp.body).toBe(201);
    expect(imp.json().parameters.map((p: { step: number | null }) => p.step)).toEqual([null, 1]);
  });
});

describe('the model grid', () => {
  it('gives each axis its parameter\'s step', async () => {
    const id = (await create({ parameters: SPACE, method: 'random', batch_size: 4, seed: 6 })).json().id as string;
    for (let g = 0; g < 2; g++) {
      const s = await suggest(id, 4);
      await observe(id, s.trials.map((tr, i) => ({ trial_id: tr.trial_id, value: i })));
    }
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=x&y=n&n=5` });
    expect(res.statusCode, res.body).toBe(200);
    expect([res.json().x.step, res.json().y.step]).toEqual([0.1, 5]);
  });
});

describe('hostile steps (property test)', () => {
  const num = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e-300, 1e-9, 0.1, 0.3, 1, 3, 1e300, -1e308, 1e308));
  const hostileCase = fc.tuple(num, num, num);
  // Bounds and steps a person writes: decimals, a step that may or may not divide the width.
  const decimal = fc.tuple(fc.integer({ min: -2000, max: 2000 }), fc.constantFrom(1, 10, 100, 1000)).map(([n, d]) => n / d);
  const plausibleCase = fc.tuple(decimal, decimal, fc.oneof(decimal.map(Math.abs), fc.constantFrom(0.1, 0.25, 0.3, 1, 2, 5)));
  it('any step and bounds: a 201 whose loop hands out grid values and takes them back, or a 400 at a pointer; never a 500', async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof({ arbitrary: hostileCase, weight: 1 }, { arbitrary: plausibleCase, weight: 3 }), fc.constantFrom('float', 'float', 'int'), fc.constantFrom('linear', 'linear', 'log'), fc.boolean(), async ([a, b, step], type, scale, withPrior) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const p = { name: 'p', type, scale, bounds: [lo, hi], step, ...(withPrior ? { prior: { mean: scale === 'log' ? Math.log(Math.abs(lo) + 1) : lo, std: 1 } } : {}) };
        const res = await create({ parameters: [p, { name: 'q', bounds: [0, 1] }], method: 'cmaes', batch_size: 2 });
        expect([201, 400], res.body).toContain(res.statusCode);
        if (res.statusCode === 400) {
          for (const e of errorsOf(res)) expect(e.path).toMatch(/^\/parameters\/0\//);
          return;
        }
        created++;
        const study = res.json();
        const [low, high] = study.parameters[0].bounds as [number, number];
        const s = await suggest(study.id, 2);
        for (const tr of s.trials) {
          expect(tr.parameters.p).toBeGreaterThanOrEqual(low);
          expect(tr.parameters.p).toBeLessThanOrEqual(high);
        }
        // A handed-out value told back as an external point is on the grid.
        const r = await observe(study.id, [...s.trials.map((tr) => ({ trial_id: tr.trial_id, value: 1 })), ...s.trials.map((tr) => ({ parameters: tr.parameters, value: 2 }))]);
        expect(r.statusCode, r.body).toBe(200);
      }),
      { numRuns: 60, seed: 20261128 },
    );
    expect(created).toBeGreaterThanOrEqual(15);
  }, 120_000);
});
