/**
 * The security headers and the rate limiter's registration (src/http/security.ts), in process:
 * - the exact set of headers sent: helmet 8's defaults (its README lists them) without HSTS, and the
 *   CSP of the module's header *instead of* helmet's default directives (`useDefaults: false`), which
 *   would add `upgrade-insecure-requests` and break /docs on a server spoken to over plain HTTP;
 * - HSTS when, and only when, the request's protocol is https. A Fastify instance with trustProxy
 *   (which the server leaves off) lets X-Forwarded-Proto set the protocol here; the test over a real
 *   TLS socket (test/hostile/review-transport.test.ts) is not part of mutation runs;
 * - no rate limiter registered when both limits are 0: nothing would be counted, and its hooks would
 *   still run on every request.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerSecurity, securityHeaders } from '../../src/http/security.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

async function bare(limits: { rateLimitPerMinute: number; rateLimitOpenLoopbackPerMinute: number }) {
  const app = Fastify({ trustProxy: true });
  apps.push(app);
  await registerSecurity(app, limits);
  app.get('/x', async () => ({ ok: true }));
  await app.ready();
  return app;
}

// The module's CSP, directive by directive, in the order helmet writes them.
const CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join(';');

describe('securityHeaders', () => {
  it("is helmet's default set less HSTS, lower-case names, with exactly the module's CSP (no upgrade-insecure-requests)", () => {
    expect(securityHeaders()).toEqual({
      'content-security-policy': CSP,
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'origin-agent-cluster': '?1',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-dns-prefetch-control': 'off',
      'x-download-options': 'noopen',
      'x-frame-options': 'SAMEORIGIN',
      'x-permitted-cross-domain-policies': 'none',
      'x-xss-protection': '0',
    });
  });
});

describe('registerSecurity', () => {
  it('sends HSTS (one year, subdomains: RFC 6797 §6.1) on a request whose protocol is https, and not on one over http', async () => {
    const app = await bare({ rateLimitPerMinute: 0, rateLimitOpenLoopbackPerMinute: 0 });
    const tls = await app.inject({ method: 'GET', url: '/x', headers: { 'x-forwarded-proto': 'https' } });
    expect(tls.statusCode).toBe(200);
    expect(tls.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(tls.headers['x-content-type-options']).toBe('nosniff');
    const plain = await app.inject({ method: 'GET', url: '/x' });
    expect(plain.headers['strict-transport-security']).toBeUndefined();
    expect(plain.headers['content-security-policy']).toBe(CSP);
  });

  it('registers the rate limiter only when one of the two limits is above 0', async () => {
    expect((await bare({ rateLimitPerMinute: 0, rateLimitOpenLoopbackPerMinute: 0 })).hasPlugin('@fastify/rate-limit')).toBe(false);
    expect((await bare({ rateLimitPerMinute: 1, rateLimitOpenLoopbackPerMinute: 0 })).hasPlugin('@fastify/rate-limit')).toBe(true);
    expect((await bare({ rateLimitPerMinute: 0, rateLimitOpenLoopbackPerMinute: 1 })).hasPlugin('@fastify/rate-limit')).toBe(true);
  });
});
