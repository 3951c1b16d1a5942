/**
 * Intermediate values and early stopping: POST /v1/studies/{id}/trials/{trial_id}/intermediate (a
 * running trial reports a value at a step and learns whether to stop) and GET
 * /v1/studies/{id}/intermediate_values (every trial's curve, for plots). Thin routes over the
 * intermediate service.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IntermediateRequest, type IntermediateService } from '../../domain/index.js';
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

const Curves = z
  .object({
    trials: z
      .array(z.object({ trial_id: z.int(), intermediate_values: z.array(IntermediateValueSchema) }))
      .describe('Every trial that reported intermediate values, by trial id, each with its values by step.'),
  })
  .meta({ examples: [{ trials: [{ trial_id: 12, intermediate_values: [{ step: 0, value: 0.9 }, { step: 1, value: 0.61 }] }] }] });

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
      summary: 'Every trial\'s intermediate values',
      description: 'The curves the trials reported (POST …/intermediate), grouped by trial: what a dashboard plots.',
      tags: ['trials'],
      params: StudyIdParams,
      response: { 200: Curves, 404: problemResponse('No such study (or it belongs to another tenant).') },
    },
    handler: async (req) => {
      const all = await intermediate.list(req.tenantId, req.params.study_id);
      const trials: { trial_id: number; intermediate_values: { step: number; value: number }[] }[] = [];
      for (const r of all) {
        const last = trials[trials.length - 1];
        if (last?.trial_id === r.trialId) last.intermediate_values.push({ step: r.step, value: r.value });
        else trials.push({ trial_id: r.trialId, intermediate_values: [{ step: r.step, value: r.value }] });
      }
      return { trials };
    },
  });
};
