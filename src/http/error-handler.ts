/**
 * The one place where errors become HTTP responses (application/problem+json, RFC 9457).
 * Every response carries a stable `code`. Anything unexpected is a generic 500 whose details go to
 * the log (with the request id), never to the client.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { STATUS_CODES } from 'node:http';
import { DomainError, ValidationError, type ErrorKind, type FieldError } from '../domain/index.js';

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

const STATUS_BY_KIND: Record<ErrorKind, number> = { invalid: 400, not_found: 404, conflict: 409, unavailable: 503 };

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

type ZodValidationError = FastifyError & { validation: { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }[] };

function zodFieldErrors(err: ZodValidationError): (FieldError & { in?: string })[] {
  const where = err.validationContext && err.validationContext !== 'body' ? { in: err.validationContext } : {};
  return err.validation.flatMap((v) => {
    const base = v.instancePath === '/' ? '' : v.instancePath;
    // Report each unknown field at its own path rather than at its parent object.
    if (v.keyword === 'unrecognized_keys' && Array.isArray(v.params.keys)) {
      return (v.params.keys as string[]).map((k) => ({ path: `${base}/${k}`, message: 'unknown field', ...where }));
    }
    return [{ path: base, message: v.message ?? 'invalid', ...where }];
  });
}

export function errorHandler(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const errors = zodFieldErrors(error as unknown as ZodValidationError);
    return sendProblem(request, reply, { status: 400, code: 'validation_failed', detail: `the request is invalid (${errors.length} issue${errors.length === 1 ? '' : 's'})`, errors });
  }
  if (error instanceof ValidationError) {
    return sendProblem(request, reply, { status: 400, code: error.code, detail: `the request is invalid (${error.errors.length} issue${error.errors.length === 1 ? '' : 's'})`, errors: error.errors });
  }
  if (error instanceof DomainError) {
    return sendProblem(request, reply, { status: STATUS_BY_KIND[error.kind], code: error.code, detail: error.message });
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

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return sendProblem(request, reply, { status: 404, code: 'route_not_found', detail: `no route for ${request.method} ${request.url.split('?')[0]}` });
}
