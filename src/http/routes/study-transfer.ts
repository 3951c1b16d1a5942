/** GET /v1/studies/{id}/export and POST /v1/studies/import: a whole study as one JSON document. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { parseDocument, type StudyTransfer } from '../../domain/index.js';
import { validationFailure } from '../error-handler.js';
import { problemResponse, StudyIdParams, studyNotFound } from '../schemas/common.js';
import { StudyDocumentSchema } from '../schemas/study-document.js';
import { StudySchema } from '../schemas/study.js';
import { toStudyResource } from './studies.js';

const tags = ['studies'];

/** Imports are whole studies, far larger than ordinary requests: their own body limit. */
export const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

export const studyTransferRoutes: FastifyPluginAsyncZod<{ transfer: StudyTransfer; bodyLimit: number }> = async (app, { transfer, bodyLimit }) => {
  app.get('/v1/studies/:study_id/export', {
    schema: {
      summary: 'Export a study',
      description: 'The study with every trial (internal points included) and every engine-state snapshot, as one document that POST /v1/studies/import accepts.',
      tags,
      params: StudyIdParams,
      response: { 200: StudyDocumentSchema, 404: studyNotFound },
    },
    handler: async (req) => transfer.export(req.tenantId, req.params.study_id),
  });

  app.post('/v1/studies/import', {
    bodyLimit,
    // The schema documents the body; the document's own validator checks it with bounded work
    // (array lengths first, at most MAX_ERRORS issues): src/domain/transfer/document-parse.ts.
    validatorCompiler: () => (data) => {
      const parsed = parseDocument(data);
      return parsed.success ? { value: parsed.data } : validationFailure(parsed.issues);
    },
    schema: {
      summary: 'Import a study',
      description: `Creates a new study (new id, owned by the caller) from an exported document; it continues exactly where the original was. Checked thoroughly (every number finite, trials and engine states consistent with the study); nothing is written unless all of it is. Body limit: ${bodyLimit / 1024 / 1024} MiB.`,
      tags,
      body: StudyDocumentSchema,
      response: { 201: StudySchema, 400: problemResponse('Invalid document: `errors` lists the issues (at most 20; checking stops there), each with its JSON pointer.'), 413: problemResponse('Document larger than the import body limit.') },
    },
    handler: async (req, reply) => {
      const study = await transfer.import(req.tenantId, req.body);
      return reply.code(201).header('location', `/v1/studies/${encodeURIComponent(study.id)}`).send(toStudyResource(study));
    },
  });
};
