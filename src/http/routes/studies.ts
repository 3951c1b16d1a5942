/** /v1/studies: thin routes over the study service. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { outcomesOf, type Study, type StudyService } from '../../domain/index.js';
import { PageQuery, problemResponse, StudyIdParams, studyNotFound as notFound } from '../schemas/common.js';
import { CreateStudyBody, PatchStudyBody, StudyListSchema, StudySchema, type StudyResource } from '../schemas/study.js';

export function toStudyResource(s: Study): StudyResource {
  const outcomes = outcomesOf(s);
  return {
    id: s.id,
    name: s.name,
    direction: s.direction,
    parameters: s.parameters,
    prior: s.prior,
    method: s.method,
    batch_size: s.batchSize,
    options: s.options,
    seed: s.seed,
    max_trials: s.maxTrials,
    lease_seconds: s.leaseSeconds,
    known_optimum: s.knownOptimum,
    metadata: s.metadata,
    state: s.state,
    reason: s.reason,
    generation: s.generation,
    trial_counts: s.trialCounts,
    allow_repeats: s.loop.allowRepeats,
    stopping: s.loop.stopping,
    objectives: outcomes.objectives,
    constraints: outcomes.constraints,
    reference_point: outcomes.referencePoint,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

const tags = ['studies'];
const invalid = problemResponse('Invalid request: `errors` lists every issue with its JSON pointer.');

export const studyRoutes: FastifyPluginAsyncZod<{ studies: StudyService }> = async (app, { studies }) => {
  app.post('/v1/studies', {
    schema: {
      summary: 'Create a study',
      description: 'Validates the whole specification and echoes the effective prior and options.',
      tags,
      body: CreateStudyBody,
      response: { 201: StudySchema, 400: invalid, 413: problemResponse('Body larger than BODY_LIMIT.'), 415: problemResponse('Body is not JSON.') },
    },
    handler: async (req, reply) => {
      const study = await studies.create(req.tenantId, req.body);
      return reply.code(201).header('location', `/v1/studies/${encodeURIComponent(study.id)}`).send(toStudyResource(study));
    },
  });

  app.get('/v1/studies', {
    schema: {
      summary: 'List studies',
      description: 'Oldest first; cursor pagination via page_token / next_page_token.',
      tags,
      querystring: PageQuery,
      response: { 200: StudyListSchema, 400: invalid },
    },
    handler: async (req) => {
      const page = await studies.list(req.tenantId, { pageSize: req.query.page_size, pageToken: req.query.page_token });
      return { studies: page.studies.map(toStudyResource), next_page_token: page.nextPageToken };
    },
  });

  app.get('/v1/studies/:study_id', {
    schema: { summary: 'Get a study', description: 'Includes trial counts by state.', tags, params: StudyIdParams, response: { 200: StudySchema, 404: notFound } },
    handler: async (req) => toStudyResource(await studies.get(req.tenantId, req.params.study_id)),
  });

  app.patch('/v1/studies/:study_id', {
    schema: {
      summary: 'Update a study',
      description: 'Rename, replace metadata, or change state (ACTIVE ⇄ PAUSED, → COMPLETED).',
      tags,
      params: StudyIdParams,
      body: PatchStudyBody,
      response: { 200: StudySchema, 400: invalid, 404: notFound, 409: problemResponse('The state change is not allowed (code invalid_state_transition).') },
    },
    handler: async (req) => toStudyResource(await studies.update(req.tenantId, req.params.study_id, req.body)),
  });

  app.delete('/v1/studies/:study_id', {
    schema: {
      summary: 'Delete a study',
      description: 'Deletes the study with its trials and history.',
      tags,
      params: StudyIdParams,
      response: { 204: z.undefined().describe('Deleted.'), 404: notFound },
    },
    handler: async (req, reply) => {
      await studies.delete(req.tenantId, req.params.study_id);
      return reply.code(204).send();
    },
  });
};
