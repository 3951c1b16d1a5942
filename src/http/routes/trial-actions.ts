/** POST /v1/studies/{id}/trials/{trial_id}/{heartbeat,fail,abandon}: thin routes over the loop service. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LoopService } from '../../domain/index.js';
import { problemResponse } from '../schemas/common.js';
import { AbandonBody, FailBody, HeartbeatBody } from '../schemas/loop.js';
import { toTrialResource, TrialParams, TrialSchema } from '../schemas/trial.js';

const tags = ['loop'];
const notFound = problemResponse('No such study (study_not_found) or trial (trial_not_found).');
const invalid = problemResponse('Invalid body or trial_id (validation_failed).');

export const trialActionRoutes: FastifyPluginAsyncZod<{ loop: LoopService }> = async (app, { loop }) => {
  app.post('/v1/studies/:study_id/trials/:trial_id/heartbeat', {
    schema: {
      summary: 'Extend a lease',
      description:
        'The lease runs lease_seconds from now. Any caller may extend it unless it names a client_id, which must then hold the lease. ' +
        'A lease that expired but whose trial nobody else took yet is renewed for its last holder.',
      tags,
      params: TrialParams,
      body: HeartbeatBody,
      response: { 200: TrialSchema, 400: invalid, 404: notFound, 409: problemResponse('Not ACTIVE (trial_not_active) or leased to another client (lease_not_held).') },
    },
    handler: async (req) => toTrialResource(await loop.heartbeat(req.tenantId, req.params.study_id, req.params.trial_id, req.body?.client_id)),
  });

  app.post('/v1/studies/:study_id/trials/:trial_id/fail', {
    schema: {
      summary: 'Report a failed evaluation',
      description:
        'The trial becomes FAILED with the reason; the model never sees it, and a replacement point is generated when needed. Repeating it is a no-op. ' +
        'A trial the service gave up on (ABANDONED as superseded or study_completed) can still be failed by its client.',
      tags,
      params: TrialParams,
      body: FailBody,
      response: { 200: TrialSchema, 400: invalid, 404: notFound, 409: problemResponse('COMPLETED (trial_already_completed), abandoned by a client (trial_not_active), or leased to another client (lease_not_held).') },
    },
    handler: async (req) => toTrialResource(await loop.fail(req.tenantId, req.params.study_id, req.params.trial_id, req.body.reason, req.body.client_id)),
  });

  app.post('/v1/studies/:study_id/trials/:trial_id/abandon', {
    schema: {
      summary: 'Abandon a trial',
      description:
        'The point will never be evaluated: ABANDONED (failure_reason abandoned_by_client), and a result sent later is refused. Repeating it is a no-op. ' +
        'A trial the service gave up on (superseded) becomes abandoned by the client.',
      tags,
      params: TrialParams,
      body: AbandonBody,
      response: { 200: TrialSchema, 400: invalid, 404: notFound, 409: problemResponse('COMPLETED (trial_already_completed), FAILED (trial_not_active), or leased to another client (lease_not_held).') },
    },
    handler: async (req) => toTrialResource(await loop.abandon(req.tenantId, req.params.study_id, req.params.trial_id, req.body?.client_id)),
  });
};
