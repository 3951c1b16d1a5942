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
    errors: z.array(FieldErrorSchema).optional().describe('Every validation issue found (400 validation_failed only).'),
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

export const StudyIdParams = z.object({
  study_id: z.string().min(1).max(128).describe('The id returned when the study was created.'),
});

export const PageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(1000).default(50).describe('Items per page (1–1000, default 50).'),
  page_token: z.string().min(1).max(4096).optional().describe('The `next_page_token` of the previous page.'),
});

export const Timestamp = z.iso.datetime().describe('ISO-8601 UTC timestamp.');

/** Deepest nesting accepted in free-form JSON (metadata, engine states); ours never exceed a few levels. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a parsed JSON value nests deeper than `max` arrays/objects. Iterative, because the checks
 * that follow (JSON.stringify for the size, storage) recurse and a 100 000-level body overflows the stack.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const x of Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
  }
  return false;
}

/**
 * A free-form JSON object no deeper than MAX_JSON_DEPTH and at most `maxBytes` as JSON text (the
 * size is measured only once the depth is known to be safe).
 */
export function boundedJsonObject(maxBytes: number, sizeMessage: string) {
  return z.record(z.string(), z.unknown()).superRefine((m, ctx) => {
    if (nestsDeeperThan(m, MAX_JSON_DEPTH)) ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_JSON_DEPTH} levels deep` });
    else if (Buffer.byteLength(JSON.stringify(m)) > maxBytes) ctx.addIssue({ code: 'custom', message: sizeMessage });
  });
}

/** A UTF-16 surrogate not paired with its partner: a u-mode class matches only those. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/**
 * Text the database keeps: JSON can carry lone surrogates ("\ud800"), which have no UTF-8 form,
 * so SQLite would store U+FFFD instead and the study would silently differ from what was sent.
 */
export function wellFormed<T extends z.ZodString>(s: T) {
  return s.refine((v) => !LONE_SURROGATE.test(v), 'must be well-formed Unicode (a lone surrogate such as \\ud800 cannot be stored)');
}

/**
 * True only when A and B are the same type. The domain declares the shapes it accepts (it may not
 * import these schemas: http → domain), and each schema file states with `SameShape` that the
 * schema's output is exactly that shape, so the two cannot drift apart and routes need no casts.
 */
export type SameShape<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
