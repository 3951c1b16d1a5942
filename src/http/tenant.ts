/**
 * Which tenant a request acts for: `Authorization: Bearer <api key>` on every route except the
 * public ones (probes, metrics, the spec and its UI). Default-deny: a route is public only if it is
 * listed here, so a new route is protected without anyone remembering to protect it, and unknown
 * paths answer 401 rather than revealing which routes exist.
 *
 * Two stages, so that the rate limiter (a route-level onRequest hook, which runs after this
 * app-level one) can count failed attempts per client IP before the 401 goes out:
 *   onRequest   authenticate, remember the outcome (request.principal or request.authFailure)
 *   preParsing  refuse unauthenticated requests, before their body is read or parsed
 *
 * /metrics is public like the probes: scrapers run inside the deployment, the metrics are
 * server-wide aggregates with no tenant or study labels, and a tenant's key must not unlock other
 * tenants' aggregates. Restrict it at the network level if that matters in a deployment.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_TENANT, type Authenticator, type Principal } from '../domain/auth/api-keys.js';
import { sendProblem } from './error-handler.js';

declare module 'fastify' {
  interface FastifyRequest {
    tenantId: string;
    /** The authenticated key (keyId null when the server runs open); null before or without auth. */
    principal: Principal | null;
    authFailure: 'missing' | 'invalid' | null;
  }
}

export { DEFAULT_TENANT };

const PUBLIC_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);

export function isPublicRoute(url: string | undefined): boolean {
  // The dashboard's static pages are public so a user can load them and paste a key; its data
  // comes from the /v1 routes, which the pages call with that key.
  return url !== undefined && (PUBLIC_ROUTES.has(url) || url === '/docs' || url.startsWith('/docs/') || url === '/ui' || url.startsWith('/ui/'));
}

/** The credential of `Authorization: Bearer <key>`; null when there is no Authorization header. */
export function bearerCredential(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  // A malformed header is a presented-but-wrong credential, never "no credential" (which may mean open).
  return m ? m[1]! : '';
}

function unauthorized(request: FastifyRequest, reply: FastifyReply, reason: 'missing' | 'invalid') {
  // RFC 6750 §3: say which scheme to use; `invalid_token` only when a credential was presented.
  reply.header('www-authenticate', reason === 'missing' ? 'Bearer realm="probnes"' : 'Bearer realm="probnes", error="invalid_token"');
  const detail = reason === 'missing' ? 'this route needs an API key: send Authorization: Bearer <key>' : 'the API key is not valid (unknown, revoked or malformed)';
  return sendProblem(request, reply, { status: 401, code: 'unauthorized', detail });
}

export function registerTenant(app: FastifyInstance, auth: Authenticator): void {
  app.decorateRequest('tenantId', '');
  app.decorateRequest('principal', null);
  app.decorateRequest('authFailure', null);
  app.addHook('onRequest', async (request) => {
    if (isPublicRoute(request.routeOptions.url)) return;
    const outcome = await auth.authenticate(bearerCredential(request.headers.authorization));
    if (outcome.ok) {
      request.principal = outcome.principal;
      request.tenantId = outcome.principal.tenantId;
    } else {
      request.authFailure = outcome.reason;
    }
  });
  app.addHook('preParsing', async (request, reply) => {
    if (request.authFailure) return unauthorized(request, reply, request.authFailure);
  });
}
