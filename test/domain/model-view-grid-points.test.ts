/**
 * The grid's points as the engine computes them (model-views.ts hands the worker the grid's axes,
 * gridPoints in engine-tasks.ts expands them): x and y varied over the axes the answer reports,
 * every other parameter held at the value the answer reports as fixed. The points are built in
 * internal coordinates by an affine step from the distribution's centre (O(d) each); here each is
 * checked against the user-unit point mapped through toInternal, on a study whose
 * joint prior correlates the parameters (L0 not diagonal) and with a log-scaled one, so a wrong
 * direction, centre or scale shows. The ellipses are checked against userDistribution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import { createEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import { gridPoints, type EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { readStudy } from '../../src/domain/studies/codec.js';
import { internalDistribution, userDistribution } from '../../src/domain/studies/distribution.js';
import { ModelViews } from '../../src/domain/studies/model-views.js';
import { searchSpace, toInternal } from '../../src/domain/studies/transforms.js';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { GridSchema } from '../../src/http/schemas/model.js';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let id = '';

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(t.app, method, url, payload);

beforeAll(async () => {
  t = await makeTestApp();
  const study = await call('POST', '/v1/studies', {
    name: 'grid-points',
    method: 'cmaes',
    batch_size: 4,
    seed: 3,
    parameters: [
      { name: 'a', bounds: [-5, 5] },
      { name: 'lr', scale: 'log', bounds: [1e-4, 1] },
      { name: 'b', bounds: [-5, 5] },
    ],
    prior: { mean: [0.5, -4, 1], covariance: [[1, 0.6, 0.3], [0.6, 2, -0.4], [0.3, -0.4, 1.5]] },
  });
  id = study.id;
  for (let g = 0; g < 3; g++) {
    const s = await call('GET', `/v1/studies/${id}/suggestions?count=4&client_id=w`);
    await call('POST', `/v1/studies/${id}/observations`, {
      observations: s.trials.map((tr: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: tr.trial_id, value: tr.parameters.a! ** 2 + Math.log(tr.parameters.lr!) ** 2 / 10 + tr.parameters.b! })),
    });
  }
}, 60_000);
afterAll(async () => {
  await t.app.close();
  await t.storage.close();
});

describe('grid points', () => {
  it('are the user-unit grid points (axes × fixed values) in internal coordinates', async () => {
    const inner = createEngineRunner(0);
    const tasks: EngineTask[] = [];
    const engine: EngineRunner = { run: (task, caller) => (tasks.push(task), inner.run(task, caller)), close: () => inner.close() };
    const views = new ModelViews({ storage: t.storage, engine });
    const g = await views.grid(DEFAULT_TENANT, id, { x: 'b', y: 'lr', n: 7 });
    const task = tasks.find((k) => k.op === 'model-view');
    if (!task || task.op !== 'model-view' || task.task.view !== 'grid-axes') throw new Error('no grid task');
    // The task carries the axes, not the n² points.
    expect(JSON.stringify(task).length).toBeLessThan(2000);
    const points = gridPoints(task.task.axes);
    const record = await t.storage.getStudy(DEFAULT_TENANT, id);
    const study = readStudy(record!);
    const space = searchSpace(study.parameters, study.prior);
    expect(points).toHaveLength(49);
    let k = 0;
    for (const yv of g.y.values) {
      for (const xv of g.x.values) {
        const user = space.parameters.map((p) => (p.name === 'b' ? xv : p.name === 'lr' ? yv : (g.fixed[p.name] as number)));
        const want = toInternal(space, user);
        const got = points[k++]!;
        expect(got).toHaveLength(want.length);
        got.forEach((v, j) => expect(v).toBeCloseTo(want[j]!, 9));
      }
    }
    // The ellipses' centre and extent are the (x, y) marginal of the distribution in user units.
    const state = await t.storage.getEngineState(id, undefined);
    const dist = userDistribution(space, internalDistribution(state!.state, space));
    const [ib, il] = [2, 1];
    expect(g.distribution.mean[0]).toBeCloseTo(dist.meanTransformed[ib]!, 12);
    expect(Math.log(g.distribution.mean[1])).toBeCloseTo(dist.meanTransformed[il]!, 12);
    const one = g.distribution.ellipses.find((e) => e.sigma === 1)!.points;
    // The 1σ ellipse's extent along each axis is that axis' standard deviation.
    const xs = one.map((p) => p[0]), ys = one.map((p) => Math.log(p[1]));
    expect(Math.max(...xs) - dist.meanTransformed[ib]!).toBeCloseTo(dist.std[ib]!, 2);
    expect(dist.meanTransformed[il]! - Math.min(...ys)).toBeCloseTo(dist.std[il]!, 2);
    // Its covariance: the point at θ = 0 is centre + L(1, 0), L the 2×2 Cholesky factor of the marginal.
    const cxy = dist.covariance[ib]![il]!;
    expect(Math.log(one[0]![1]) - dist.meanTransformed[il]!).toBeCloseTo(cxy / dist.std[ib]!, 9);
  });

  it('the route writes the grid exactly as the zod serializer of its schema would', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=a&y=lr&n=9` });
    expect(res.statusCode, res.body).toBe(200);
    const zod = serializerCompiler({ schema: GridSchema, method: 'GET', url: '/', httpStatus: '200' } as never);
    expect(res.body).toBe(zod(JSON.parse(res.body)));
  });
});
