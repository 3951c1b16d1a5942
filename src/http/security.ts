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
 * requests without a valid key (open mode, failed authentication). Counters live in process
 * memory: with several replicas each enforces its own share; a shared store (Redis) would be
 * needed for a global limit. Probes are never limited, so an orchestrator cannot be throttled
 * into restarting a healthy server.
 */
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface SecurityOptions {
  /** Requests per minute per key; 0 = no limit. */
  rateLimitPerMinute: number;
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

/** Must be registered before the routes: the rate limiter attaches itself to routes as they are added. */
export async function registerSecurity(app: FastifyInstance, opts: SecurityOptions): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    // An API and its docs are not embedded cross-origin; keep the remaining helmet defaults.
  });
  if (opts.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      global: true,
      max: opts.rateLimitPerMinute,
      timeWindow: 60_000,
      keyGenerator: rateLimitKey,
      allowList: (request) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? ''),
      // Thrown into our error handler, which turns a 429 into problem+json with code rate_limited.
      errorResponseBuilder: (_request, ctx) =>
        Object.assign(new Error(`too many requests: at most ${ctx.max} per minute per API key; retry in ${ctx.after}`), { statusCode: ctx.statusCode }),
    });
  }
}
