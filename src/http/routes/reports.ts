/** /best, /history and /distribution: what a study has found and where its search stands. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ReportsService } from '../../domain/index.js';
import { problemResponse, StudyIdParams, studyNotFound as notFound } from '../schemas/common.js';
import { BestSchema, DistributionSchema, FrontHistorySchema, FrontQuery, FrontSchema, HistoryQuery, HistorySchema } from '../schemas/reports.js';
import { toTrialResource } from '../schemas/trial.js';

const tags = ['results'];

export const reportRoutes: FastifyPluginAsyncZod<{ reports: ReportsService }> = async (app, { reports }) => {
  app.get('/v1/studies/:study_id/best', {
    schema: {
      summary: 'Best point: observed and estimated',
      description: 'The best completed trial, and the search-distribution mean with the model\'s prediction there.',
      tags,
      params: StudyIdParams,
      response: { 200: BestSchema, 404: notFound, 429: problemResponse('The model\'s prediction is computed once per engine state; when the tenant\'s engine queue is full it waits (engine_busy): retry after Retry-After.') },
    },
    handler: async (req) => {
      const b = await reports.best(req.tenantId, req.params.study_id);
      return {
        observed: b.observed && { trial_id: b.observed.trialId, parameters: b.observed.parameters, value: b.observed.value },
        estimated: { parameters: b.estimated.parameters, predicted_value: b.estimated.predictedValue, predicted_std: b.estimated.predictedStd },
        front: b.front,
      };
    },
  });

  app.get('/v1/studies/:study_id/history', {
    schema: {
      summary: 'Regret history and per-generation distribution',
      description:
        'Evaluations in completion order with the running best and simple regret (with known_optimum), and each generation\'s search distribution and diagnostics, ' +
        'in pages: follow next_page_token until it is null. Each page costs the server O(page), whatever the study\'s size; `stride` downsamples the evaluations and keeps every best-so-far step.',
      tags,
      params: StudyIdParams,
      querystring: HistoryQuery,
      response: { 200: HistorySchema, 400: problemResponse('Invalid query (validation_failed) or page_token (invalid_page_token).'), 404: notFound },
    },
    handler: async (req) => {
      const { page_size, page_token, stride } = req.query;
      const h = await reports.history(req.tenantId, req.params.study_id, { pageSize: page_size, pageToken: page_token ?? null, stride });
      return {
        known_optimum: h.knownOptimum,
        evaluation_count: h.evaluationCount,
        next_page_token: h.nextPageToken,
        evaluations: h.evaluations.map((e) => ({ index: e.index, trial_id: e.trialId, value: e.value, best_so_far: e.bestSoFar, regret: e.regret })),
        generations: h.generations.map((g) => ({ generation: g.generation, mean: g.mean, std: g.std, integral_mean: g.integralMean, integral_std: g.integralStd, n_active: g.nActive })),
      };
    },
  });

  app.get('/v1/studies/:study_id/front', {
    schema: {
      summary: 'Pareto front of the feasible results',
      description:
        'The trials no other feasible trial beats in every objective (docs/multi-objective.md), sorted by the first objective, in pages, with the front\'s hypervolume against the reference point (declared, or derived and said so). ' +
        'For one objective: the best feasible trial.',
      tags,
      params: StudyIdParams,
      querystring: FrontQuery,
      response: { 200: FrontSchema, 400: problemResponse('Invalid query (validation_failed) or page_token (invalid_page_token).'), 404: notFound },
    },
    handler: async (req) => {
      const f = await reports.front(req.tenantId, req.params.study_id, { pageSize: req.query.page_size, pageToken: req.query.page_token ?? null });
      return {
        objectives: f.objectives,
        reference_point: f.referencePoint,
        hypervolume: f.hypervolume,
        front_size: f.frontSize,
        evaluation_count: f.evaluationCount,
        feasible_count: f.feasibleCount,
        trials: f.trials.map(toTrialResource),
        next_page_token: f.nextPageToken,
      };
    },
  });

  app.get('/v1/studies/:study_id/front/history', {
    schema: {
      summary: 'Hypervolume of the front over evaluations',
      description: 'After each result in completion order, the hypervolume of the front of the feasible results so far, all against one reference point (the one GET …/front reports), in pages.',
      tags,
      params: StudyIdParams,
      querystring: FrontQuery,
      response: { 200: FrontHistorySchema, 400: problemResponse('Invalid query (validation_failed) or page_token (invalid_page_token).'), 404: notFound },
    },
    handler: async (req) => {
      const h = await reports.frontHistory(req.tenantId, req.params.study_id, { pageSize: req.query.page_size, pageToken: req.query.page_token ?? null });
      return {
        reference_point: h.referencePoint,
        points: h.points.map((p) => ({ index: p.index, trial_id: p.trialId, hypervolume: p.hypervolume, front_size: p.frontSize })),
        next_page_token: h.nextPageToken,
      };
    },
  });

  app.get('/v1/studies/:study_id/distribution', {
    schema: {
      summary: 'Current search distribution',
      description: 'Mean in user units and in each parameter\'s transformed scale (ln for log-scaled parameters), with the covariance in that scale. Before the first engine state: the prior.',
      tags,
      params: StudyIdParams,
      response: { 200: DistributionSchema, 404: notFound },
    },
    handler: async (req) => {
      const d = await reports.distribution(req.tenantId, req.params.study_id);
      return { generation: d.generation, mean: d.mean, mean_transformed: d.meanTransformed, covariance: d.covariance, std: d.std, scale: d.scale, probabilities: d.probabilities };
    },
  });
};
