/**
 * Security headers (helmet) and per-key rate limiting.
 *
 * CSP: one policy for every response. JSON responses need none of it; the strictest policy that
 * still lets Swagger UI at /docs run is: scripts and styles only from this origin (Swagger UI's
 * bundle, initializer and CSS are static files under /docs/static), inline styles allowed because
 * Swagger UI's React components set `style` attributes, images also from data: URIs (its icons),
 * fetches only to this origin (/docs/json). No `upgrade-insecure-requests`: the server speaks
 * plain HTTP behind a TLS-terminating proxy or on loopback, where upgrading would break /docs.
 *
 * Rate limit: per API key (so one tenant's client cannot starve another), per client IP for
 * requests without a valid key (open mode, failed authentication). Requests the server serves open
 * (no key exists) from a loopback address have their own limit, none by default: there the server
 * is one user's tool on their own machine, and a loop with a cheap objective easily sends more
 * than 100 requests a second; open requests from any other address (ALLOW_INSECURE_OPEN) keep the
 * keyed limit. Counters live in process memory: with several replicas each enforces its own share;
 * a shared store (Redis) would be needed for a global limit. Probes are never limited, so an
 * orchestrator cannot be throttled into restarting a healthy server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import { isLoopbackHost } from '../bind-policy.js';

export interface SecurityOptions {
  /** Requests per minute per key (per client IP without one); 0 = no limit. */
  rateLimitPerMinute: number;
  /** Requests per minute per client served open from a loopback address; 0 = no limit. */
  rateLimitOpenLoopbackPerMinute: number;
}

export const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'", "'unsafe-inline'"],
};

const UNLIMITED_ROUTES = new Set(['/healthz', '/readyz']);

/** Whether the rate limiter counts requests to this route (the OpenAPI document lists its 429). */
export function isRateLimitedRoute(url: string): boolean {
  return !UNLIMITED_ROUTES.has(url);
}

export function rateLimitKey(request: FastifyRequest): string {
  const keyId = request.principal?.keyId;
  return keyId ? `key:${keyId}` : `ip:${request.ip}`;
}

/**
 * The limit that applies to a request (0 = none). The tenant hook has run by then (app-level
 * onRequest before the limiter's route-level one), so `principal` says whether it was served open.
 */
export function rateLimitFor(request: FastifyRequest, opts: SecurityOptions): number {
  const open = request.principal !== null && request.principal.keyId === null;
  return open && isLoopbackHost(request.ip) ? opts.rateLimitOpenLoopbackPerMinute : opts.rateLimitPerMinute;
}

/**
 * The headers helmet sets (its defaults, with CONTENT_SECURITY_POLICY as the CSP), computed once:
 * none depends on the request. (The @fastify/helmet plugin built helmet's middleware again on every
 * request, parsing the CSP directives each time: a few per cent of the main thread's time per loop
 * request in a CPU profile.)
 */
export function securityHeaders(): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
    // Stryker disable next-line ArrowFunction,MethodExpression: helmet 8 removes only X-Powered-By, which it never sets, so there is never anything here to delete
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  // An API and its docs are not embedded cross-origin; keep the remaining helmet defaults.
  // Stryker disable next-line BlockStatement: helmet passes an error only from CSP directives computed per request, and these are constant strings
  helmet({ contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY }, strictTransportSecurity: false })({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => {
    // Stryker disable next-line ConditionalExpression: as above, err is always undefined here
    if (err) throw err;
  });
  return headers;
}

/**
 * HSTS, sent only on a response that travels over TLS: RFC 6797 §7.2 says a host must not send it
 * over plain HTTP (a browser ignores it there, and a server that sends it on every answer claims a
 * TLS it may not have). `request.protocol` is https when the connection is TLS, or when Fastify's
 * trustProxy (off here: the server is not told which proxy to trust) accepts X-Forwarded-Proto;
 * behind a TLS-terminating proxy the proxy sends HSTS (docker/Caddyfile does).
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

/** Must be registered before the routes: the rate limiter attaches itself to routes as they are added. */
export async function registerSecurity(app: FastifyInstance, opts: SecurityOptions): Promise<void> {
  const headers = securityHeaders();
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    if (request.protocol === 'https') reply.header('strict-transport-security', STRICT_TRANSPORT_SECURITY);
    done();
  });
  if (opts.rateLimitPerMinute > 0 || opts.rateLimitOpenLoopbackPerMinute > 0) {
    await app.register(rateLimit, {
      global: true,
      max: (request) => rateLimitFor(request, opts),
      timeWindow: 60_000,
      keyGenerator: rateLimitKey,
      // Stryker disable next-line StringLiteral: any string that is not a probe's route does the same for a request without a route (a 404)
      allowList: (request) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? '') || rateLimitFor(request, opts) === 0,
      // Thrown into our error handler, which turns a 429 into problem+json with code rate_limited.
      errorResponseBuilder: (_request, ctx) =>
        Object.assign(new Error(`too many requests: at most ${ctx.max} per minute per API key (per client address without one); retry in ${ctx.after}`), { statusCode: ctx.statusCode }),
    });
  }
}
