/**
 * Which tenant a request acts for. Until API keys are configured the server runs open (bound to
 * loopback by default) and every request belongs to the `default` tenant created by the first
 * migration; authentication will set `request.tenantId` from the key instead.
 */
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    tenantId: string;
  }
}

export const DEFAULT_TENANT = 'default';

export function registerTenant(app: FastifyInstance): void {
  app.decorateRequest('tenantId', '');
  app.addHook('onRequest', async (request) => {
    request.tenantId = DEFAULT_TENANT;
  });
}
