/**
 * Authentication and tenant isolation: Bearer keys on every /v1 route, 401 problem+json with
 * WWW-Authenticate, public probes and docs, revoked and environment keys, open mode only without
 * keys, a tenant never sees or changes another's studies (404, list counts, page tokens),
 * per-key rate limiting (429 + Retry-After; none for an open server's loopback clients by default)
 * and the security headers.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ApiKeyService, hashApiKey } from '../../src/domain/auth/api-keys.js';
import { bearerCredential } from '../../src/http/tenant.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { studyBody } from '../helpers/app.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

async function make(opts: { allowOpen?: boolean; envKeys?: { tenant: string; key: string }[]; rateLimitPerMinute?: number; rateLimitOpenLoopbackPerMinute?: number; storage?: Storage } = {}) {
  const storage = opts.storage ?? SqliteStorage.open(':memory:');
  const envKeys = (opts.envKeys ?? []).map((k) => ({ tenantId: k.tenant, keyHash: hashApiKey(k.key) }));
  for (const k of envKeys) await storage.ensureTenant(k.tenantId, new Date().toISOString());
  const app = await buildApp({
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: opts.rateLimitPerMinute ?? 6000, rateLimitOpenLoopbackPerMinute: opts.rateLimitOpenLoopbackPerMinute },
    storage,
    auth: { envKeys, allowOpen: opts.allowOpen ?? true },
  });
  apps.push(app);
  return { app, storage, keys: new ApiKeyService({ storage }) };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

function expectUnauthorized(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }) {
  expect(res.statusCode).toBe(401);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer realm="probnes"/);
  expect(res.json()).toMatchObject({ status: 401, code: 'unauthorized' });
}

/** Every /v1 route that addresses one study, with a body where it needs one. */
function studyRoutes(id: string) {
  const s = `/v1/studies/${id}`;
  return [
    { method: 'GET', url: s },
    { method: 'PATCH', url: s, payload: { name: 'stolen' } },
    { method: 'DELETE', url: s },
    { method: 'GET', url: `${s}/suggestions?count=1` },
    { method: 'POST', url: `${s}/observations`, payload: { observations: [{ trial_id: 1, value: 1 }] } },
    { method: 'GET', url: `${s}/trials` },
    { method: 'GET', url: `${s}/trials/1` },
    { method: 'POST', url: `${s}/trials/1/heartbeat`, payload: {} },
    { method: 'POST', url: `${s}/trials/1/fail`, payload: { reason: 'x' } },
    { method: 'POST', url: `${s}/trials/1/abandon`, payload: {} },
    { method: 'GET', url: `${s}/best` },
    { method: 'GET', url: `${s}/history` },
    { method: 'GET', url: `${s}/distribution` },
    { method: 'GET', url: `${s}/export` },
  ] as const;
}

describe('Bearer authentication', () => {
  it('answers 401 problem+json with WWW-Authenticate on every /v1 route without a valid key', async () => {
    const { app, keys } = await make();
    const { key } = await keys.create('acme');
    const created = await app.inject({ method: 'POST', url: '/v1/studies', headers: bearer(key), payload: studyBody({ method: 'random', batch_size: 1 }) });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const routes = [{ method: 'GET', url: '/v1/studies' }, { method: 'POST', url: '/v1/studies', payload: studyBody() }, { method: 'POST', url: '/v1/studies/import', payload: {} }, ...studyRoutes(id)];
    for (const r of routes) {
      for (const headers of [{}, bearer('pnk_wrong'), { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: `bearer ${key}x` }, { authorization: 'Bearer' }]) {
        const res = await app.inject({ ...r, headers } as never);
        expectUnauthorized(res);
      }
    }
    // Missing → plain challenge; presented but wrong → invalid_token (RFC 6750).
    expect((await app.inject({ method: 'GET', url: '/v1/studies' })).headers['www-authenticate']).toBe('Bearer realm="probnes"');
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer('nope') })).headers['www-authenticate']).toBe('Bearer realm="probnes", error="invalid_token"');
    // The study is untouched by all those attempts.
    const after = await app.inject({ method: 'GET', url: `/v1/studies/${id}`, headers: bearer(key) });
    expect(after.json()).toMatchObject({ id, name: 'quadratic', trial_counts: { REQUESTED: 0, ACTIVE: 0 } });
  });

  it('accepts the scheme case-insensitively and rejects unknown paths with 401 rather than revealing routes', async () => {
    const { app, keys } = await make();
    const { key } = await keys.create('acme');
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: { authorization: `bearer ${key}` } })).statusCode).toBe(200);
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/nothing-here' }));
    expect((await app.inject({ method: 'GET', url: '/v1/nothing-here', headers: bearer(key) })).statusCode).toBe(404);
  });

  it('keeps probes, the spec and the docs public', async () => {
    const { app, keys } = await make({ allowOpen: false });
    await keys.create('acme');
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs', '/docs/static/swagger-ui.css']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(400);
    }
  });

  it('refuses a key from the moment it is revoked', async () => {
    const { app, keys } = await make({ allowOpen: false });
    const a = await keys.create('acme');
    const b = await keys.create('acme', 'second');
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(a.key) })).statusCode).toBe(200);
    expect(await keys.revoke(a.record.id)).toBe(true);
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(a.key) }));
    // Another key of the same tenant still works, and revoking every key never reopens the server.
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(b.key) })).statusCode).toBe(200);
    await keys.revoke(b.record.id);
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies' }));
  });

  it('accepts keys from the environment, each for its own tenant', async () => {
    const keyA = 'a'.repeat(40);
    const keyB = 'b'.repeat(40);
    const { app } = await make({ allowOpen: false, envKeys: [{ tenant: 'alpha', key: keyA }, { tenant: 'beta', key: keyB }] });
    const created = await app.inject({ method: 'POST', url: '/v1/studies', headers: bearer(keyA), payload: studyBody() });
    expect(created.statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${created.json().id}`, headers: bearer(keyB) })).statusCode).toBe(404);
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer('c'.repeat(40)) }));
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies' }));
  });
});

describe('open mode', () => {
  it('without any key, requests act as the default tenant; once a key exists, every request needs one', async () => {
    const { app, keys } = await make({ allowOpen: true });
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody() });
    expect(created.statusCode).toBe(201);
    // A presented key is always checked, even while open.
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer('pnk_bogus') }));
    const { key } = await keys.create('default');
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies' }));
    const list = await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(key) });
    expect(list.json().studies.map((s: { id: string }) => s.id)).toEqual([created.json().id]);
  });

  it('a server started with keys (allowOpen false) never runs open, even with none left', async () => {
    const { app } = await make({ allowOpen: false });
    expectUnauthorized(await app.inject({ method: 'GET', url: '/v1/studies' }));
  });
});

describe('tenant isolation', () => {
  async function twoTenants() {
    const ctx = await make();
    const a = (await ctx.keys.create('tenant-a')).key;
    const b = (await ctx.keys.create('tenant-b')).key;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/studies', headers: bearer(a), payload: studyBody({ name: `a${i}`, method: 'random', batch_size: 1 }) });
      ids.push(res.json().id);
    }
    // Give the first study trials, so trial routes would have something to find.
    const sug = await ctx.app.inject({ method: 'GET', url: `/v1/studies/${ids[0]}/suggestions?count=2&client_id=w`, headers: bearer(a) });
    expect(sug.statusCode).toBe(200);
    return { ...ctx, a, b, ids };
  }

  it("answers 404 (never 403) on every route of another tenant's study, and changes nothing", async () => {
    const { app, a, b, ids } = await twoTenants();
    const before = await app.inject({ method: 'GET', url: `/v1/studies/${ids[0]}/export`, headers: bearer(a) });
    expect(before.statusCode).toBe(200);
    for (const r of studyRoutes(ids[0]!)) {
      const res = await app.inject({ ...r, headers: bearer(b) } as never);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(404);
      expect(res.json().code, `${r.method} ${r.url}`).toBe('study_not_found');
    }
    const after = await app.inject({ method: 'GET', url: `/v1/studies/${ids[0]}/export`, headers: bearer(a) });
    expect({ ...after.json(), exported_at: null }).toEqual({ ...before.json(), exported_at: null });
  });

  it("answers identically for another tenant's study and a study that does not exist", async () => {
    const { app, b, ids } = await twoTenants();
    const theirs = await app.inject({ method: 'GET', url: `/v1/studies/${ids[0]}/trials/1`, headers: bearer(b) });
    const none = await app.inject({ method: 'GET', url: `/v1/studies/no-such-study/trials/1`, headers: bearer(b) });
    const strip = (j: any) => ({ ...j, detail: j.detail.replace(/"[^"]*"/, '"…"'), instance: undefined, request_id: undefined });
    expect(theirs.statusCode).toBe(none.statusCode);
    expect(strip(theirs.json())).toEqual(strip(none.json()));
  });

  it("lists and counts only the tenant's own studies, and one tenant's page token is useless to another", async () => {
    const { app, a, b, ids } = await twoTenants();
    const mine = await app.inject({ method: 'POST', url: '/v1/studies', headers: bearer(b), payload: studyBody({ name: 'b0' }) });
    const listA = await app.inject({ method: 'GET', url: '/v1/studies?page_size=1000', headers: bearer(a) });
    expect(listA.json().studies.map((s: { id: string }) => s.id)).toEqual(ids);
    const listB = await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(b) });
    expect(listB.json().studies.map((s: { id: string }) => s.id)).toEqual([mine.json().id]);
    expect(listB.json().next_page_token).toBeNull();

    const page1 = await app.inject({ method: 'GET', url: '/v1/studies?page_size=1', headers: bearer(a) });
    const token = page1.json().next_page_token as string;
    expect(token).toEqual(expect.any(String));
    const stolen = await app.inject({ method: 'GET', url: `/v1/studies?page_size=1&page_token=${encodeURIComponent(token)}`, headers: bearer(b) });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().code).toBe('invalid_page_token');
    const own = await app.inject({ method: 'GET', url: `/v1/studies?page_size=1&page_token=${encodeURIComponent(token)}`, headers: bearer(a) });
    expect(own.json().studies[0].id).toBe(ids[1]);
  });

  it("an imported copy of another tenant's export belongs to the importer and leaves the original alone", async () => {
    const { app, a, b, ids } = await twoTenants();
    const doc = (await app.inject({ method: 'GET', url: `/v1/studies/${ids[0]}/export`, headers: bearer(a) })).json();
    const imported = await app.inject({ method: 'POST', url: '/v1/studies/import', headers: bearer(b), payload: doc });
    expect(imported.statusCode).toBe(201);
    expect(imported.json().id).not.toBe(ids[0]);
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${imported.json().id}`, headers: bearer(a) })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(a) })).json().studies).toHaveLength(3);
  });
});

describe('rate limiting', () => {
  it('answers 429 problem+json rate_limited with Retry-After per key, leaving other keys and probes alone', async () => {
    const { app, keys } = await make({ rateLimitPerMinute: 3 });
    const a = (await keys.create('tenant-a')).key;
    const b = (await keys.create('tenant-b')).key;
    for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(a) })).statusCode).toBe(200);
    const limited = await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(a) });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(b) })).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('counts requests without a valid key per client address', async () => {
    const { app, keys } = await make({ rateLimitPerMinute: 2 });
    const a = (await keys.create('tenant-a')).key;
    for (let i = 0; i < 2; i++) expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer('guess') })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer('guess') })).statusCode).toBe(429);
    expect((await app.inject({ method: 'GET', url: '/v1/studies', headers: bearer(a) })).statusCode).toBe(200);
  });
});

describe('rate limiting by mode', () => {
  const KEYED_LIMIT = 100;
  const studies = (app: FastifyInstance, extra: Partial<InjectOptions> = {}) => app.inject({ method: 'GET', url: '/v1/studies', ...extra });

  // The limiter's window is a minute, so 300 requests sent at once (well inside it) are 300 in a second to it.
  it('an open server takes 300 requests at once from loopback clients without a 429, under a keyed limit of 100 per minute', async () => {
    const { app } = await make({ rateLimitPerMinute: KEYED_LIMIT });
    const codes = await Promise.all(Array.from({ length: 300 }, (_, i) => studies(app, { remoteAddress: i % 2 === 0 ? '127.0.0.1' : '::1' })));
    expect(codes.map((r) => r.statusCode).filter((c) => c !== 200)).toEqual([]);
  });

  it('the same open server still limits a client on another address (ALLOW_INSECURE_OPEN), and RATE_LIMIT_OPEN_LOOPBACK_PER_MINUTE sets a loopback limit', async () => {
    const { app } = await make({ rateLimitPerMinute: 2 });
    for (let i = 0; i < 2; i++) expect((await studies(app, { remoteAddress: '10.1.2.3' })).statusCode).toBe(200);
    expect((await studies(app, { remoteAddress: '10.1.2.3' })).statusCode).toBe(429);
    const limited = await make({ rateLimitPerMinute: 0, rateLimitOpenLoopbackPerMinute: 2 });
    for (let i = 0; i < 2; i++) expect((await studies(limited.app)).statusCode).toBe(200);
    expect((await studies(limited.app)).statusCode).toBe(429);
  });

  it('a keyed server on loopback still limits each key to its limit', async () => {
    const { app, keys } = await make({ rateLimitPerMinute: KEYED_LIMIT });
    const a = (await keys.create('tenant-a')).key;
    // One after another: @fastify/rate-limit's in-memory store hands every request of a burst started in
    // one tick the same (final) counter, so inject()ing all 300 at once would refuse all of them.
    const codes: number[] = [];
    for (let i = 0; i < 300; i++) codes.push((await studies(app, { headers: bearer(a) })).statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(KEYED_LIMIT);
    expect(codes.filter((c) => c === 429)).toHaveLength(300 - KEYED_LIMIT);
  });

  it('a server that was open demands keys, and limits them, once a key is created', async () => {
    const { app, keys } = await make({ rateLimitPerMinute: 2 });
    for (let i = 0; i < 5; i++) expect((await studies(app)).statusCode).toBe(200);
    const a = (await keys.create('tenant-a')).key;
    expect((await studies(app)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) expect((await studies(app, { headers: bearer(a) })).statusCode).toBe(200);
    expect((await studies(app, { headers: bearer(a) })).statusCode).toBe(429);
  });
});

describe('security headers', () => {
  it('sends helmet headers and a CSP that allows only same-origin scripts', async () => {
    const { app } = await make();
    for (const url of ['/healthz', '/docs/', '/v1/studies']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      // Over plain HTTP there is no HSTS (over TLS there is: test/hostile/review-transport.test.ts).
      expect(res.headers['strict-transport-security']).toBeUndefined();
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    }
  });
});

describe('bearerCredential', () => {
  it('parses the header strictly', () => {
    expect(bearerCredential(undefined)).toBeNull();
    expect(bearerCredential('Bearer abc')).toBe('abc');
    expect(bearerCredential('bearer   abc ')).toBe('abc');
    for (const bad of ['', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Bearerabc', 'Bearer\tabc']) expect(bearerCredential(bad)).toBe('');
  });
});
