/** GET /v1/studies/{id}/suggestions: thin route over the loop service. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LoopService } from '../../domain/index.js';
import { problemResponse, StudyIdParams } from '../schemas/common.js';
import { budgetNote, extrasNote, SuggestionsQuery, SuggestionsSchema } from '../schemas/loop.js';
import { toTrialResource } from '../schemas/trial.js';

export const suggestionRoutes: FastifyPluginAsyncZod<{ loop: LoopService }> = async (app, { loop }) => {
  app.get('/v1/studies/:study_id/suggestions', {
    schema: {
      summary: 'Get points to evaluate',
      description:
        'Leases `count` trials to `client_id` for lease_seconds. Trials the client already holds come back first, so a retried request never creates work. ' +
        'While the study is ACTIVE the answer is never empty: when the generation\'s points are all handed out, more are drawn from the current distribution, conditioned on the pending ones. ' +
        '`reason` says why fewer than `count` came back; `extras`, when points beyond the generation were handed out; `budget`, with max_trials_reached, which leases hold the rest of max_trials.',
      tags: ['loop'],
      params: StudyIdParams,
      querystring: SuggestionsQuery,
      response: {
        200: SuggestionsSchema,
        400: problemResponse('Invalid count or client_id (validation_failed).'),
        404: problemResponse('No such study (study_not_found).'),
        429: problemResponse('The tenant or the study has its bound of engine computations queued or running, or the queue is longer than ENGINE_QUEUE_MAX_WAIT_MS (engine_busy): nothing was written; retry after Retry-After (docs/capacity.md).'),
        503: problemResponse('The optimiser failed to compute points (engine_error), or the study kept changing (concurrent_update); retry.'),
      },
    },
    handler: async (req) => {
      const s = await loop.suggest(req.tenantId, req.params.study_id, req.query.count, req.query.client_id);
      return {
        trials: s.trials.map(toTrialResource),
        reason: s.reason,
        generation: s.generation,
        generation_size: s.generationSize,
        extras: extrasNote(s.extras, s.generationSize, s.ranksGeneration),
        budget: budgetNote(s.budget),
      };
    },
  });
};
