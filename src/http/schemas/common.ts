/** Schemas shared by every route: problem details, pagination, identifiers. */
import { z } from 'zod';

export const FieldErrorSchema = z.object({
  path: z.string().describe('JSON pointer to the offending field, e.g. /parameters/2/prior/std'),
  message: z.string(),
  in: z.enum(['body', 'querystring', 'params', 'headers']).optional().describe('Where the field is; the body when absent.'),
});

export const ProblemSchema = z
  .object({
    type: z.string().describe('URI identifying the problem type (urn:probnes:problem:<code>).'),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    instance: z.string().describe('The request path.'),
    code: z.string().describe('Stable machine-readable code, e.g. study_not_found, validation_failed.'),
    request_id: z.string().optional().describe('Also sent as the x-request-id header; quote it when reporting a problem.'),
    errors: z.array(FieldErrorSchema).max(20).optional().describe('The validation issues found, at most 20 (checking stops there; 400 validation_failed only).'),
  })
  .meta({
    id: 'Problem',
    examples: [
      {
        type: 'urn:probnes:problem:study_not_found',
        title: 'Not Found',
        status: 404,
        detail: 'no study with id "4b1c…"',
        instance: '/v1/studies/4b1c…',
        code: 'study_not_found',
        request_id: 'b3f1c0de-2c1e-4f0a-9a55-0c6f1b1a2d3e',
      },
    ],
  });

/** OpenAPI response entry for errors, which are sent as application/problem+json. */
export function problemResponse(description: string) {
  return { description, content: { 'application/problem+json': { schema: ProblemSchema } } };
}

/** The 404 of every route under /v1/studies/{study_id}. */
export const studyNotFound = problemResponse('No such study (or it belongs to another tenant).');

export const StudyIdParams = z.object({
  study_id: z.string().min(1).max(128).describe('The id returned when the study was created.'),
});

/** The cursor a listing answers with, next to its items. */
export const NextPageToken = z.string().nullable().describe('Pass as page_token for the next page; null on the last page.');

export const PageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(1000).default(50).describe('Items per page (1–1000, default 50).'),
  page_token: z.string().min(1).max(4096).optional().describe('The `next_page_token` of the previous page.'),
});
