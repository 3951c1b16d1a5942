/** Hostile input on the read routes: trials, one trial, best, history, distribution, export, the method list, probes. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAW_SEGMENTS, extraKey, hostileId, hostileQueryValue, hostileString, numberAsString, rawNumber } from './arbitraries.js';
import { enc, fixture, runs, hostile, route, type Fixture } from './harness.js';
import { tamper, tampered } from './tokens.js';

const RUNS = runs(20);

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
});
afterAll(async () => {
  await f.close();
});

describe(route('GET /v1/studies/{study_id}/trials'), () => {
  it('hostile state, page_size and page_token values; tokens tampered with or issued for another listing', async () => {
    const token = (url: string) => f.app.inject({ method: 'GET', url }).then((r) => r.json().next_page_token as string);
    const mine = await token(`/v1/studies/${f.a}/trials?page_size=1`);
    // Valid tokens, but for other listings: another study, another state filter, the study list.
    const others = [await token(`/v1/studies/${f.b}/trials?page_size=1`), await token(`/v1/studies/${f.b}/trials?page_size=1&state=ACTIVE`), await token('/v1/studies?page_size=1')];
    expect([mine, ...others].every(Boolean)).toBe(true);
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileQueryValue, fc.constantFrom('ACTIVE', 'active', 'COMPLETED ', 'ACTIVE,FAILED')), hostileQueryValue, tamper, fc.nat(2), async (state, size, t, o) => {
        await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/trials?state=${enc(state)}&page_size=${enc(size)}` }, { snap: false });
        const bad = tampered(mine, others[o]!, t);
        const res = await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/trials?page_token=${enc(bad)}` }, { snap: false });
        if (bad !== mine) expect(res.statusCode).toBe(400);
        expect((await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/trials?page_token=${enc(others[o]!)}` }, { snap: false })).statusCode).toBe(400);
      }),
      RUNS,
    );
  });
});

describe(route('GET /v1/studies/{study_id}/trials/{trial_id}'), () => {
  it('trial ids that are unknown, another study\'s, not integers, huge, or not valid URL text', async () => {
    const tid = fc.oneof(hostileId, numberAsString, rawNumber.map(String), fc.constantFrom('5', '8', '9007199254740992', '1e308', '-0', '0x1', '1.0'));
    await fc.assert(
      fc.asyncProperty(tid, async (t) => {
        await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/trials/${enc(t)}` }, { snap: false });
      }),
      RUNS,
    );
    for (const raw of RAW_SEGMENTS) expect((await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/trials/${raw}` }, { snap: false })).statusCode).toBeGreaterThanOrEqual(400);
    // Trials 5–8 exist in the other study only.
    expect((await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/trials/7` })).statusCode).toBe(404);
  });
});

for (const r of ['best', 'history', 'distribution', 'export'] as const) {
  describe(route(`GET /v1/studies/{study_id}/${r}`), () => {
    it('hostile study ids and query strings', async () => {
      await fc.assert(
        fc.asyncProperty(hostileId, extraKey, hostileString, async (id, key, value) => {
          const res = await hostile(f, { method: 'GET', url: `/v1/studies/${enc(id)}/${r}` }, { snap: false });
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          // Unknown query parameters are ignored by these routes (they declare none).
          const ok = await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/${r}?${enc(key || 'k')}=${enc(value)}` }, { snap: false });
          expect(ok.statusCode).toBe(200);
        }),
        runs(20),
      );
    });
  });
}

describe(route('GET /v1/methods'), () => {
  it('hostile query strings and headers get the same list; other verbs and sub-paths a problem that changes nothing', async () => {
    const reference = await f.app.inject({ method: 'GET', url: '/v1/methods' });
    expect(reference.statusCode).toBe(200);
    expect((reference.json() as { methods: { default: boolean }[] }).methods[0]!.default).toBe(true);
    await fc.assert(
      fc.asyncProperty(extraKey, hostileString, async (key, value) => {
        const ascii = value.replace(/[^\x20-\x7e]/g, '');
        const res = await hostile(f, { method: 'GET', url: `/v1/methods?${enc(key || 'k')}=${enc(value)}`, headers: { 'x-request-id': ascii || 'x', accept: ascii || '*/*' } }, { snap: false });
        // The route declares no query parameter and reads nothing of the request: the same list, byte for byte.
        expect(res.statusCode).toBe(200);
        expect(res.body).toBe(reference.body);
      }),
      runs(20),
    );
    // The list is read-only, and no method has a resource of its own under it.
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await hostile(f, { method, url: '/v1/methods', payload: { methods: [{ name: 'evil', default: true }] } });
      expect(res.statusCode, method).toBeGreaterThanOrEqual(400);
    }
    for (const raw of [...RAW_SEGMENTS, 'prob-cmaes', '__proto__']) {
      expect((await hostile(f, { method: 'GET', url: `/v1/methods/${raw}` }, { snap: false })).statusCode, raw).toBeGreaterThanOrEqual(400);
    }
    expect((await f.app.inject({ method: 'GET', url: '/v1/methods' })).body).toBe(reference.body);
  });
});

for (const probe of ['/healthz', '/readyz'] as const) {
  describe(route(`GET ${probe}`), () => {
    it('hostile query strings and headers still get a 200', async () => {
      await fc.assert(
        fc.asyncProperty(extraKey, hostileString, async (key, value) => {
          const res = await hostile(f, { method: 'GET', url: `${probe}?${enc(key || 'k')}=${enc(value)}`, headers: { authorization: `Bearer ${value.replace(/[^\x20-\x7e]/g, '')}`, 'x-request-id': value.replace(/[^\x20-\x7e]/g, '') || 'x' } }, { snap: false });
          expect(res.statusCode).toBe(200);
        }),
        runs(20),
      );
    });
  });
}
