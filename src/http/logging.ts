/**
 * What a request's log line says about it. Fastify's request serializer writes the URL as sent,
 * and a client that puts its key in the query (`?access_token=…`, `?api_key=…`: unsupported, the
 * key belongs in the Authorization header) would have it written to every log it reaches. Here the
 * value of every query parameter whose name looks like a credential is replaced by [REDACTED]
 * before the line is written, and so is a value that itself holds such a `name=` (a key after a
 * `;`, a second `?` or a `#`). The API's own parameters keep their values (page_token is an opaque
 * cursor, not a credential).
 */
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export const REDACTED = '[REDACTED]';

/** Names (lower-cased, decoded) that look like a credential: access_token, api_key, apiKey, key, password, secret, … */
const CREDENTIAL_NAME = /token|key|secret|passw|pwd|pass$|auth|credential|signature|^sig$|session|jwt|bearer|cookie|private/;
/** Query parameters of the API itself that match CREDENTIAL_NAME without being one. */
const API_PARAMETERS = new Set(['page_token']);
/** A value that carries a credential-looking `name=` of its own. */
const EMBEDDED = /(token|key|secret|passw|pwd|auth|credential|signature|session|jwt|bearer|cookie|private)[^&]*=/;

function decoded(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll('+', ' ')).toLowerCase();
  } catch {
    return s.toLowerCase();
  }
}

/** Whether a query parameter's value must not be logged. */
export function isCredentialParameter(name: string, value: string): boolean {
  const n = decoded(name);
  return (CREDENTIAL_NAME.test(n) && !API_PARAMETERS.has(n)) || EMBEDDED.test(decoded(value));
}

/** The URL with the values of credential-looking query parameters replaced by [REDACTED]. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0) return part;
      return isCredentialParameter(part.slice(0, eq), part.slice(eq + 1)) ? `${part.slice(0, eq)}=${REDACTED}` : part;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** Fastify's request serializer (lib/logger-pino.js), with the URL's credentials redacted. */
export function serializeRequest(req: FastifyRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactUrl(req.url),
    version: req.headers?.['accept-version'],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * The logger the app writes with: `logger` with serializeRequest as its `req` serializer (Fastify
 * keeps a given logger's own serializers over its defaults).
 */
export function requestLogger(logger: Logger): Logger {
  return logger.child({}, { serializers: { req: serializeRequest } });
}
