/** GET /v1/studies/{id}/trials and /trials/{trial_id}: thin routes over the reports service. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { IntermediateService, ReportsService } from '../../domain/index.js';
import { problemResponse, StudyIdParams } from '../schemas/common.js';
import { toTrialResource, TrialListQuery, TrialListSchema, TrialParams, TrialWithCurveSchema } from '../schemas/trial.js';

const tags = ['trials'];

export const trialReadRoutes: FastifyPluginAsyncZod<{ reports: ReportsService; intermediate: IntermediateService }> = async (app, { reports, intermediate }) => {
  app.get('/v1/studies/:study_id/trials', {
    schema: {
      summary: 'List trials',
      description: 'By ascending trial id, optionally only those in one state; cursor pagination via page_token / next_page_token (a token is valid only for the same study and state filter).',
      tags,
      params: StudyIdParams,
      querystring: TrialListQuery,
      response: { 200: TrialListSchema, 400: problemResponse('Invalid query (validation_failed) or page_token (invalid_page_token).'), 404: problemResponse('No such study (or it belongs to another tenant).') },
    },
    handler: async (req) => {
      const { state, page_size, page_token } = req.query;
      const page = await reports.listTrials(req.tenantId, req.params.study_id, { pageSize: page_size, pageToken: page_token, ...(state ? { state } : {}) });
      return { trials: page.trials.map(toTrialResource), next_page_token: page.nextPageToken };
    },
  });

  app.get('/v1/studies/:study_id/trials/:trial_id', {
    schema: {
      summary: 'Get a trial',
      description: 'One trial with its state, point, lease and outcome, and the intermediate values it reported (early stopping).',
      tags,
      params: TrialParams,
      response: { 200: TrialWithCurveSchema, 400: problemResponse('trial_id is not a positive integer.'), 404: problemResponse('No such study (study_not_found) or trial (trial_not_found).') },
    },
    handler: async (req) => {
      const trial = await reports.getTrial(req.tenantId, req.params.study_id, req.params.trial_id);
      const curve = await intermediate.list(req.tenantId, req.params.study_id, [trial.trialId]);
      return { ...toTrialResource(trial), intermediate_values: curve.map((r) => ({ step: r.step, value: r.value })) };
    },
  });
};
