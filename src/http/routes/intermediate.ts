/**
 * Intermediate values and early stopping: POST /v1/studies/{id}/trials/{trial_id}/intermediate (a
 * running trial reports a value at a step and learns whether to stop) and GET
 * /v1/studies/{id}/intermediate_values (the trials' curves, for plots, in pages of at most
 * INTERMEDIATE_LIMITS.maxPageSize values). Thin routes over the intermediate service.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { INTERMEDIATE_LIMITS, IntermediateRequest, type IntermediateService } from '../../domain/index.js';
import { problemResponse, StudyIdParams } from '../schemas/common.js';
import { IntermediateValueSchema, TrialParams } from '../schemas/trial.js';

const REASONS = ['no_rule', 'trial_finished', 'before_min_steps', 'warming_up', 'no_peers_at_step', 'not_worse_than_median', 'worse_than_median'] as const;

const IntermediateBody = IntermediateRequest.meta({ examples: [{ step: 3, value: 0.42 }] });

const StopAnswer = z
  .object({
    trial_id: z.int(),
    step: z.int(),
    value: z.number().describe('The value stored for this step.'),
    should_stop: z.boolean().describe('Stop evaluating this trial: report it with its last value and "stopped": true in POST …/observations.'),
    reason: z
      .enum(REASONS)
      .describe(
        'Why: no_rule (the study has no `stopping`), trial_finished (the trial is no longer running; a retried report), before_min_steps, warming_up (fewer than warmup_trials trials completed), ' +
          'no_peers_at_step (no completed trial reported this step), not_worse_than_median, worse_than_median (should_stop).',
      ),
    detail: z.string().describe('The same, with the numbers compared, for people.'),
    median: z.number().nullable().describe('The completed trials\' median at this step the trial was compared with; null when no comparison was made.'),
  })
  .meta({
    id: 'StopDecision',
    examples: [
      {
        trial_id: 12,
        step: 3,
        value: 0.42,
        should_stop: true,
        reason: 'worse_than_median',
        detail: 'best value so far 0.42 against the median 0.31 of 6 completed trial(s) at step 3: worse, stop',
        median: 0.31,
      },
    ],
  });

const { defaultPageSize, maxPageSize } = INTERMEDIATE_LIMITS;

const CurvesQuery = z.object({
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxPageSize)
    .default(defaultPageSize)
    .describe(`Intermediate values per page, counted over all the page's trials (1–${maxPageSize}, default ${defaultPageSize}).`),
  page_token: z.string().min(1).max(4096).optional().describe('The `next_page_token` of the previous page (valid for the same study only).'),
});

const Curves = z
  .object({
    trials: z
      .array(z.object({ trial_id: z.int(), intermediate_values: z.array(IntermediateValueSchema) }))
      .describe(
        'The trials that reported intermediate values, by trial id, each with its values by step; at most page_size values in all. ' +
          'A curve that does not fit continues on the next page, which then starts with the same trial_id and the following steps.',
      ),
    next_page_token: z.string().nullable().describe('Pass as page_token for the next page; null on the last page.'),
  })
  .meta({ examples: [{ trials: [{ trial_id: 12, intermediate_values: [{ step: 0, value: 0.9 }, { step: 1, value: 0.61 }] }], next_page_token: null }] });

const tags = ['loop'];

export const intermediateRoutes: FastifyPluginAsyncZod<{ intermediate: IntermediateService }> = async (app, { intermediate }) => {
  app.post('/v1/studies/:study_id/trials/:trial_id/intermediate', {
    schema: {
      summary: 'Report an intermediate value; should the trial stop?',
      description:
        'A running trial (ACTIVE, or still evaluated after its lease expired or the service gave it up) reports its objective at a step. One value per step: ' +
          'repeating a report is answered again (200), a different value for a stored step is 409 intermediate_value_conflict. ' +
          'The answer applies the study\'s `stopping` rule (the median rule: docs/early-stopping.md); without one should_stop is always false, and the values are still kept for the curves.',
      tags,
      params: TrialParams,
      body: IntermediateBody,
      response: {
        200: StopAnswer,
        400: problemResponse('Invalid body or trial_id (validation_failed; `errors` names each problem by JSON pointer).'),
        404: problemResponse('No such study (study_not_found) or trial (trial_not_found).'),
        409: problemResponse('A different value for a step already reported (intermediate_value_conflict), or the trial is not running (trial_not_active).'),
      },
    },
    handler: async (req) => {
      const r = await intermediate.report(req.tenantId, req.params.study_id, req.params.trial_id, req.body);
      const d = r.decision;
      return { trial_id: r.trialId, step: r.step, value: r.value, should_stop: d.shouldStop, reason: d.reason, detail: d.detail, median: d.median };
    },
  });

  app.get('/v1/studies/:study_id/intermediate_values', {
    schema: {
      summary: 'The trials\' intermediate values, in pages',
      description:
        'The curves the trials reported (POST …/intermediate), grouped by trial: what a dashboard plots. ' +
          `Pages follow (trial id, step) order and hold at most page_size values in all (default ${defaultPageSize}, at most ${maxPageSize}), whatever the number of trials or the length of a curve: ` +
          'a trial whose curve does not fit in the rest of a page continues at the start of the next one, under the same trial_id. ' +
          'Cursor pagination via page_token / next_page_token (a token is valid only for the same study); each page is read from the index in O(page_size). ' +
          'A value reported behind the cursor while a client walks the pages appears in the next walk. See docs/early-stopping.md.',
      tags: ['trials'],
      params: StudyIdParams,
      querystring: CurvesQuery,
      response: {
        200: Curves,
        400: problemResponse('Invalid page_size (validation_failed, naming /page_size) or page_token (invalid_page_token).'),
        404: problemResponse('No such study (or it belongs to another tenant).'),
      },
    },
    handler: async (req) => {
      const page = await intermediate.listPage(req.tenantId, req.params.study_id, { pageSize: req.query.page_size, pageToken: req.query.page_token ?? null });
      const trials: { trial_id: number; intermediate_values: { step: number; value: number }[] }[] = [];
      for (const r of page.values) {
        const last = trials[trials.length - 1];
        if (last?.trial_id === r.trialId) last.intermediate_values.push({ step: r.step, value: r.value });
        else trials.push({ trial_id: r.trialId, intermediate_values: [{ step: r.step, value: r.value }] });
      }
      return { trials, next_page_token: page.nextPageToken };
    },
  });
};
