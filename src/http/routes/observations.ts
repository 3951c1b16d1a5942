/** POST /v1/studies/{id}/observations: thin route over the loop service. */
import { serializerCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { countParameterKeys, type LoopService } from '../../domain/index.js';
import { problemResponse, StudyIdParams } from '../schemas/common.js';
import { ObservationsBody, ObservationsSchema } from '../schemas/loop.js';
import { toTrialResource } from '../schemas/trial.js';

/**
 * The 200 answer is written with JSON.stringify alone, not run through zod first: that encode was
 * about 5% of the main thread's time per single observation in a profile (the ISO timestamps are
 * checked by regular expression, per trial, so a batch of 100 paid more), only to check an object the
 * handler builds field by field (toTrialResource, the schema's keys in its order, from numbers the
 * body schema already required finite). The handler's return type is still checked against the
 * schema at compile time; the OpenAPI document still comes from the schema; error answers keep
 * the zod serializer.
 */
const serializeOk = (route: { httpStatus?: string }) =>
  route.httpStatus === '200' ? (data: unknown) => JSON.stringify(data) : serializerCompiler(route as Parameters<typeof serializerCompiler>[0]);

export const observationRoutes: FastifyPluginAsyncZod<{ loop: LoopService }> = async (app, { loop }) => {
  app.post('/v1/studies/:study_id/observations', {
    serializerCompiler: serializeOk,
    // Before the body schema: a point of more keys than any study has parameters is refused uncounted.
    preValidation: async (req) => countParameterKeys(req.body),
    schema: {
      summary: 'Report results',
      description:
        'Atomic: the whole batch is validated before anything is written. By trial_id for suggested points, ' +
        'or by parameters for points evaluated elsewhere (they join the model\'s data as external trials). ' +
        'Late results are accepted: for an expired lease, and for a trial the service gave up on (ABANDONED as superseded or study_completed), which becomes COMPLETED with late=true, ' +
        'counts toward max_trials and joins the model\'s data like an external observation. Re-sending an identical result is a no-op; ' +
        'a different value for a COMPLETED trial is 409 trial_already_completed; a FAILED trial, or one a client abandoned, takes no result (409 trial_not_active). ' +
        'When batch_size results of the current generation are in, the search distribution is updated before the response.',
      tags: ['loop'],
      params: StudyIdParams,
      body: ObservationsBody,
      response: {
        200: ObservationsSchema,
        400: problemResponse('Invalid batch (validation_failed; `errors` lists every issue, e.g. a parameter outside its bounds or a duplicated trial_id).'),
        404: problemResponse('No such study (study_not_found) or trial in this study (trial_not_found).'),
        409: problemResponse('A different value for a COMPLETED trial (trial_already_completed), or a FAILED trial or one a client abandoned (trial_not_active).'),
      },
    },
    handler: async (req) => {
      const r = await loop.observe(req.tenantId, req.params.study_id, req.body.observations);
      return { trials: r.trials.map(toTrialResource), generation: r.generation, study_state: r.studyState };
    },
  });
};
