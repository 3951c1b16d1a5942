/**
 * The one place where errors become HTTP responses (application/problem+json, RFC 9457).
 * Every response carries a stable `code`. Anything unexpected is a generic 500 whose details go to
 * the log (with the request id), never to the client.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { STATUS_CODES } from 'node:http';
import type { z, ZodType } from 'zod';
import { DomainError, MAX_ERRORS, pointer, StorageUnavailableError, ValidationError, type ErrorKind, type FieldError } from '../domain/index.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  request_id: string;
  errors?: (FieldError & { in?: string })[];
}

const STATUS_BY_KIND: Record<ErrorKind, number> = { invalid: 400, not_found: 404, conflict: 409, unavailable: 503, busy: 429 };

/** Fastify's own errors that a client can cause, by Fastify error code. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; detail?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'malformed_json', detail: 'the request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'malformed_json', detail: 'the request body is empty but Content-Type is application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type', detail: 'send the request body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_content_length' },
};

const GENERIC_CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

export function sendProblem(request: FastifyRequest, reply: FastifyReply, p: Omit<Problem, 'type' | 'title' | 'instance' | 'request_id'>) {
  const body: Problem = {
    type: `urn:probnes:problem:${p.code}`,
    title: STATUS_CODES[p.status] ?? 'Error',
    status: p.status,
    detail: p.detail,
    instance: request.url.split('?')[0]!,
    code: p.code,
    request_id: request.id,
    ...(p.errors ? { errors: p.errors } : {}),
  };
  // Our own serializer: a route's response schemas describe its success bodies, not this one.
  return reply.code(p.status).type('application/problem+json').serializer(JSON.stringify).send(body);
}

/**
 * The zod provider's validator, except that each issue's path becomes a proper JSON pointer: the
 * provider joins the segments with "/" unescaped, so a client's key such as "a/b" or "~" (a record
 * key, an unknown field) would point somewhere else. Issues keep the provider's marker, so
 * `hasZodFastifySchemaValidationErrors` still recognises them.
 */
export const validatorCompiler: FastifySchemaCompiler<ZodType> = ({ schema }) => (data) => {
  const result = schema.safeParse(data);
  return result.success ? { value: result.data } : validationFailure(result.error.issues);
};

/** Zod issues as the validation error Fastify hands to errorHandler (for validators of our own too). */
export function validationFailure(issues: readonly z.core.$ZodIssue[]): { error: Error } {
  const validation = issues.flatMap((i) => unionBranch(i, [])).map((issue) => {
    const { path, code, message, ...params } = issue;
    const at = pointer(path.map((p) => (typeof p === 'symbol' ? String(p) : p)));
    return { [Symbol.for('ZodFastifySchemaValidationError')]: true, keyword: code, instancePath: at, schemaPath: `#${at}/${code}`, message, params };
  });
  return { error: validation as unknown as Error };
}

type Issue = z.core.$ZodIssue;

/**
 * A value matching no member of a union (an observation that is neither by trial nor by
 * parameters) would otherwise be a bare "Invalid input" at the union: report instead the issues of
 * the member it came closest to, the one that does not reject its keys outright and has the fewest
 * issues, so the client learns which field is wrong.
 */
function unionBranch(issue: Issue, base: PropertyKey[]): Issue[] {
  const path = [...base, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [{ ...issue, path }];
  const score = (branch: Issue[]) => branch.length + (branch.some((i) => i.code === 'unrecognized_keys' && i.path.length === 0) ? 1000 : 0);
  const best = issue.errors.reduce((a, b) => (score(b) < score(a) ? b : a));
  return best.flatMap((i) => unionBranch(i, path));
}

type ZodValidationError = FastifyError & { validation: { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }[] };

function zodFieldErrors(err: ZodValidationError): (FieldError & { in?: string })[] {
  const where = err.validationContext && err.validationContext !== 'body' ? { in: err.validationContext } : {};
  return err.validation.flatMap((v) => {
    const base = v.instancePath === '/' ? '' : v.instancePath;
    // Report each unknown field at its own path rather than at its parent object.
    if (v.keyword === 'unrecognized_keys' && Array.isArray(v.params.keys)) {
      return (v.params.keys as string[]).map((k) => ({ path: `${base}${pointer([k])}`, message: 'unknown field', ...where }));
    }
    return [{ path: base, message: v.message ?? 'invalid', ...where }];
  });
}

/**
 * A 400 listing at most MAX_ERRORS field errors: the answer's size is bounded whatever the body
 * (validators stop collecting there too; see src/domain/transfer/document-parse.ts).
 */
function sendFieldErrors(request: FastifyRequest, reply: FastifyReply, code: string, all: (FieldError & { in?: string })[]) {
  const errors = all.slice(0, MAX_ERRORS);
  const count = all.length > MAX_ERRORS ? `${all.length} issues; the first ${MAX_ERRORS} are listed`
    : all.length === MAX_ERRORS ? `${MAX_ERRORS} issues listed; checking stops there, so there may be more`
    : `${all.length} issue${all.length === 1 ? '' : 's'}`;
  const detail = `the request is invalid (${count})`;
  return sendProblem(request, reply, { status: 400, code, detail, errors });
}

export function errorHandler(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (hasZodFastifySchemaValidationErrors(error)) {
    return sendFieldErrors(request, reply, 'validation_failed', zodFieldErrors(error as unknown as ZodValidationError));
  }
  if (error instanceof ValidationError) return sendFieldErrors(request, reply, error.code, error.errors);
  if (error instanceof DomainError) {
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    return sendProblem(request, reply, { status: STATUS_BY_KIND[error.kind], code: error.code, detail: error.message });
  }
  if ((error as unknown) instanceof StorageUnavailableError) {
    // Retryable: the replica reconnects by itself, and the loop's writes are idempotent (an
    // observation sent again after a commit whose answer was lost is accepted as the same result).
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', '1');
    return sendProblem(request, reply, { status: 503, code: 'database_unavailable', detail: 'the database is unavailable; retry (the request may be sent again as it is)' });
  }
  const known = error.code ? FASTIFY_ERRORS[error.code] : undefined;
  if (known) return sendProblem(request, reply, { status: known.status, code: known.code, detail: known.detail ?? error.message });
  // secure-json-parse rejects prototype poisoning with a SyntaxError carrying statusCode 400.
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return sendProblem(request, reply, { status: 400, code: 'malformed_json', detail: error.message });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return sendProblem(request, reply, { status, code: GENERIC_CODE_BY_STATUS[status] ?? 'bad_request', detail: error.message });
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(request, reply, { status: 500, code: 'internal_error', detail: 'an unexpected error occurred; it has been logged with this request id' });
}

/**
 * Errors Fastify raises before routing (a path segment longer than the router allows, a URL that is
 * not valid percent-encoding): problem+json like every other error, with the request id header the
 * onRequest hook would have set.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const code = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'path_segment_too_long' : 'malformed_url';
  const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment (an id) is longer than any id this server issues' : 'the URL is not valid percent-encoded UTF-8';
  return sendProblem(request, reply, { status, code, detail });
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return sendProblem(request, reply, { status: 404, code: 'route_not_found', detail: `no route for ${request.method} ${request.url.split('?')[0]}` });
}
