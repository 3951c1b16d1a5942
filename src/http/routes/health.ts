/** Liveness and readiness probes. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainError, type Operations } from '../../domain/index.js';
import { problemResponse } from '../schemas/common.js';

const tags = ['operations'];

export const healthRoutes: FastifyPluginAsyncZod<{ ops: Operations }> = async (app, { ops }) => {
  app.get('/healthz', {
    schema: {
      summary: 'Liveness',
      description: 'The process is up and serving requests.',
      tags,
      response: { 200: z.object({ status: z.literal('ok') }).meta({ examples: [{ status: 'ok' }] }) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/readyz', {
    schema: {
      summary: 'Readiness',
      description: 'The database is reachable and migrated to the schema this server expects.',
      tags,
      response: {
        200: z.object({ status: z.literal('ready'), schema_version: z.int() }).meta({ examples: [{ status: 'ready', schema_version: 1 }] }),
        503: problemResponse('Not ready (code not_ready).'),
      },
    },
    handler: async () => {
      const h = await ops.health();
      if (!h.ok) {
        throw new DomainError('unavailable', 'not_ready', h.detail ?? `database schema version ${h.schemaVersion}, expected ${h.expectedSchemaVersion}`);
      }
      return { status: 'ready' as const, schema_version: h.schemaVersion };
    },
  });
};
