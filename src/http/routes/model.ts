/** GET /v1/studies/{id}/model/grid and /model/importance: what the study's model says (src/domain/studies/model-views.ts). */
import { serializerCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ModelViews } from '../../domain/index.js';
import { problemResponse, StudyIdParams, studyNotFound } from '../schemas/common.js';
import { GridQuery, GridSchema, ImportanceQuery, ImportanceSchema } from '../schemas/model.js';

const tags = ['results'];

/**
 * The grid's 200 answer (n² means and stds, up to 1,300 drawn points: about 0.3 MB at n = 60) is
 * written with JSON.stringify when its numbers are finite, not run through zod first: zod's encode
 * of it took 3 to 40 ms of the event loop on a loaded 2-core machine, during which the server
 * answers no one, against 2 to 5 ms for the JSON alone, to check an object the handler builds field
 * by field from the schema's keys. A non-finite number (which JSON would write as null) goes to zod,
 * which refuses it as before. The OpenAPI document and the handler's compile-time type still come
 * from the schema; error answers keep the zod serializer.
 */
const serializeGrid = (route: { httpStatus?: string }) => {
  const zod = serializerCompiler(route as Parameters<typeof serializerCompiler>[0]);
  if (route.httpStatus !== '200') return zod;
  const finite = (rows: number[][]) => rows.every((r) => r.every(Number.isFinite));
  return (data: unknown) => {
    const g = data as { mean: number[][]; std: number[][]; x: { values: number[] }; y: { values: number[] }; points: { x: number; y: number; value: number }[] };
    const ok = finite(g.mean) && finite(g.std) && finite([g.x.values, g.y.values]) && g.points.every((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && Number.isFinite(p.value));
    return ok ? JSON.stringify(data) : zod(data);
  };
};
const unavailable = problemResponse('model_unavailable: fewer than two completed evaluations (with a value of the objective shown) before that generation, so there is no model to show.');

export const modelRoutes: FastifyPluginAsyncZod<{ views: ModelViews }> = async (app, { views }) => {
  app.get('/v1/studies/:study_id/model/grid', {
    serializerCompiler: serializeGrid,
    schema: {
      summary: 'The model\'s prediction on a grid over two parameters',
      description:
        'Posterior mean and std of the objective on an n×n grid over numeric parameters x and y, the other numeric parameters at the search distribution\'s mean and each categorical one at the choice `fixed` names (else its most probable choice), one contour per choice; with that distribution\'s 1σ and 2σ ellipses and the evaluated points: the data of a contour plot. For methods without a GP of their own a GP is fitted for the view (source "fitted"). `objective` picks the objective of a study with several (default: the first): its view is always a GP fitted to that objective\'s values, its mean in that objective\'s units and direction. Computed in the engine pool; at most 300 training points (the most recently completed) and n ≤ 60. The evaluated points drawn are those in the model and the 1000 most recently completed (the axes cover them): a request reads at most 1300 trials, however many the study has.',
      tags,
      params: StudyIdParams,
      querystring: GridQuery,
      response: { 200: GridSchema, 400: problemResponse('Invalid query: x or y is not a numeric parameter, x = y, n out of range, no such generation, an `objective` the study does not have (at /objective), or `fixed` not a JSON object of categorical parameters and their choices (at /fixed/<name>) (validation_failed).'), 404: studyNotFound, 409: unavailable },
    },
    handler: async (req) => {
      const g = await views.grid(req.tenantId, req.params.study_id, req.query);
      return {
        generation: g.generation,
        objective: g.objective,
        source: g.source,
        n_points: g.nPoints,
        x: g.x,
        y: g.y,
        mean: g.mean,
        std: g.std,
        loss: g.loss,
        fixed: g.fixed,
        distribution: g.distribution,
        points: g.points.map((p) => ({ trial_id: p.trialId, x: p.x, y: p.y, value: p.value, generation: p.generation, in_model: p.inModel, same_choices: p.sameChoices })),
      };
    },
  });

  app.get('/v1/studies/:study_id/model/importance', {
    schema: {
      summary: 'Parameter importance from the GP\'s length scales',
      description:
        'Every parameter\'s relevance, numeric or categorical, on one scale, with 95% intervals from the Laplace approximation of the hyperparameter posterior; for a numeric parameter also its fitted kernel length scale in its own scale (relevance = prior std / length scale; short length scale = the objective is sensitive to the parameter). `objective` picks the objective of a study with several (default: the first), modelled by a GP fitted for the view. A categorical parameter\'s relevance is read from the length scales of its one-hot inputs (the mixed kernel\'s weights per choice) as the numeric relevance with the same expected kernel correlation across the prior.',
      tags,
      params: StudyIdParams,
      querystring: ImportanceQuery,
      response: { 200: ImportanceSchema, 400: problemResponse('Invalid query, no such generation, or an `objective` the study does not have (at /objective) (validation_failed).'), 404: studyNotFound, 409: unavailable },
    },
    handler: async (req) => {
      const v = await views.importance(req.tenantId, req.params.study_id, req.query);
      return {
        generation: v.generation,
        objective: v.objective,
        source: v.source,
        n_points: v.nPoints,
        uncertainty: v.uncertainty,
        parameters: v.parameters.map((p) => ({ name: p.name, type: p.type, scale: p.scale, lengthscale: p.lengthscale, lengthscale_interval: p.lengthscaleInterval, relevance: p.relevance, relevance_interval: p.relevanceInterval })),
      };
    },
  });
};
