/**
 * The OpenAPI document is generated from the route schemas (zod → JSON Schema), served at
 * /openapi.json with Swagger UI at /docs, and checked in as openapi/openapi.yaml.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import YAML from 'yaml';
import { isRateLimitedRoute } from './security.js';
import { isPublicRoute } from './tenant.js';

function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

type OpenApiDoc = ReturnType<typeof jsonSchemaTransformObject>;

/**
 * The zod provider emits an input and an output variant of every named schema; drop the variants
 * no route refers to (our named schemas are response-only) so the document lists each once.
 */
function dropUnusedComponents(doc: OpenApiDoc): OpenApiDoc {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas;
  if (!schemas) return doc;
  const text = JSON.stringify(doc);
  for (const name of Object.keys(schemas)) {
    if (name.endsWith('Input') && !text.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  }
  return doc;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const problemRef = { $ref: '#/components/schemas/Problem' };

type Operation = { security?: Record<string, string[]>[]; responses?: Record<string, unknown> };

/**
 * Authentication and rate limiting are app-wide hooks (src/http/tenant.ts, security.ts), not part
 * of any route's schema, so their contract is added here from the same predicates the hooks use:
 * the bearer scheme and a 401 on every route that is not public, a 429 on every rate-limited one,
 * and the 503 that the error handler gives every API route when the database is unreachable.
 * Deriving it keeps a new route documented as protected without anyone remembering to say so.
 */
function addSecurity(doc: OpenApiDoc): OpenApiDoc {
  const d = doc as { components?: Record<string, unknown>; paths?: Record<string, Record<string, Operation>> };
  d.components = {
    ...d.components,
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key (`probnes keys create`, or API_KEYS): `Authorization: Bearer <key>`. Each key belongs to one tenant, which sees only its own studies. Without any key configured the server runs open (loopback only).',
      },
    },
  };
  for (const [p, item] of Object.entries(d.paths ?? {})) {
    const url = p.replace(/\{([^}]+)\}/g, ':$1');
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      const responses = (op.responses ??= {});
      if (isPublicRoute(url)) {
        op.security = [];
      } else {
        op.security = [{ bearer: [] }];
        responses['401'] = {
          description: 'No API key, or one that is unknown, revoked or malformed (code unauthorized).',
          headers: { 'WWW-Authenticate': { description: '`Bearer realm="probnes"`, with `error="invalid_token"` when a key was presented.', schema: { type: 'string' } } },
          content: { 'application/problem+json': { schema: problemRef } },
        };
      }
      if (url.startsWith('/v1/')) {
        // Every API route reads or writes the database; when it cannot be reached (PostgreSQL down,
        // a connection terminated mid-request) the answer is a retryable 503 (src/http/error-handler.ts).
        const unavailable = 'The database is unreachable (code database_unavailable; Retry-After: 1): retry, the request may be sent again as it is.';
        const own = responses['503'] as { description?: string } | undefined;
        responses['503'] = {
          description: own?.description ? `${own.description} ${unavailable}` : unavailable,
          headers: { 'Retry-After': { description: 'Seconds to wait before retrying (database_unavailable).', schema: { type: 'integer' } } },
          content: { 'application/problem+json': { schema: problemRef } },
        };
      }
      if (isRateLimitedRoute(url)) {
        const own429 = responses['429'] as { description?: string } | undefined;
        responses['429'] = {
          description:
            (own429?.description ? `${own429.description} Or: ` : '') +
            'Over RATE_LIMIT_PER_MINUTE requests in a minute for this API key (per client IP without one) (code rate_limited). ' +
            'A server running open (no keys) limits its loopback clients by RATE_LIMIT_OPEN_LOOPBACK_PER_MINUTE instead, which is 0 (no limit) by default.',
          headers: { 'Retry-After': { description: 'Seconds until a request will be accepted again.', schema: { type: 'integer' } } },
          content: { 'application/problem+json': { schema: problemRef } },
        };
      }
    }
  }
  return doc;
}

/** Swagger UI's own page under its static files, which it answers with a redirect to /docs/. */
const DOCS_STATIC_INDEX = '/docs/static/index.html';

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ProbNES Server',
        version: packageVersion(),
        description:
          'Optimisation as a service: ask for points to evaluate, report their values, and the server updates its search distribution. ' +
          'Errors are application/problem+json with a stable `code`.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'studies', description: 'Optimisation problems and their configuration.' },
        { name: 'loop', description: 'The suggest/observe loop: get points, report results, manage leases.' },
        { name: 'trials', description: 'Points handed out for evaluation and their outcomes.' },
        { name: 'results', description: 'Best point, regret history and the current search distribution.' },
        { name: 'operations', description: 'Probes and documentation.' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: (doc) => addSecurity(dropUnusedComponents(jsonSchemaTransformObject(doc))),
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    uiHooks: {
      // @fastify/swagger-ui redirects /docs/static/index.html by replacing "/static/index.html" at the
      // end of the URL it was asked for: with a query (…/index.html?x) nothing matched, and the URL
      // redirected to itself forever. The page lives at /docs/, one level up, whatever the query.
      onRequest: (request, reply, done) => {
        if (request.routeOptions.url === DOCS_STATIC_INDEX) {
          void reply.redirect('../');
          return;
        }
        done();
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** The document as YAML, exactly as `npm run openapi` writes it. */
export function openApiYaml(app: FastifyInstance): string {
  return YAML.stringify(app.swagger(), { lineWidth: 0, aliasDuplicateObjects: false });
}
