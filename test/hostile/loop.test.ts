/** Hostile input on the suggest/observe loop: suggestions, observations, heartbeat, fail, abandon. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileId, hostileQueryValue, hostileString, mutations, mutate, numberAsString, rawNumber, wrongValue } from './arbitraries.js';
import { enc, fixture, runs, hostile, jsonRequest, route, snapshot, type Fixture } from './harness.js';

const RUNS = runs(20);

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
});
afterAll(async () => {
  await f.close();
});

const num = fc.oneof(rawNumber, numberAsString, fc.double(), fc.constantFrom(-0, 0, 1e308, -1e308, 5e-324));
/** Trial ids: unknown, another study's (5–8 exist only in B), zero, negative, fractional, huge, as strings. */
const trialId = fc.oneof(fc.constantFrom(0, -1, 1.5, 5, 6, 7, 8, 99, 2 ** 53, 2 ** 53 - 1, 1e308), rawNumber, numberAsString, fc.integer({ min: 1, max: 10 }));

describe(route('GET /v1/studies/{study_id}/suggestions'), () => {
  it('hostile count and client_id values, unknown study ids', async () => {
    await fc.assert(
      fc.asyncProperty(hostileQueryValue, fc.oneof(hostileString, fc.constantFrom('w1', 'w2', 'a'.repeat(129))), hostileId, async (count, client, id) => {
        await hostile(f, { method: 'GET', url: `/v1/studies/${f.b}/suggestions?count=${enc(count)}&client_id=${enc(client)}` });
        await hostile(f, { method: 'GET', url: `/v1/studies/${f.b}/suggestions?count=1&count=2&extra=1` });
        const res = await hostile(f, { method: 'GET', url: `/v1/studies/${enc(id)}/suggestions` }, { snap: false });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
      }),
      RUNS,
    );
  });
});

describe(route('POST /v1/studies/{study_id}/observations'), () => {
  const valid = { observations: [{ trial_id: 4, value: 1, stderr: 0.5 }, { parameters: { x: 0, lr: 0.1, n: 3 }, value: 2 }] };

  it('mutations of a valid batch (wrong types, missing and extra fields, extreme numbers)', async () => {
    await fc.assert(
      fc.asyncProperty(mutations, async (ms) => {
        await hostile(f, jsonRequest('POST', `/v1/studies/${f.a}/observations`, mutate(valid, ms)));
      }),
      RUNS,
    );
  });

  it('trial ids: duplicates in one batch, another study\'s, unknown; values and stderr at the extremes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ trial_id: trialId, value: num, stderr: fc.option(num) }), { minLength: 1, maxLength: 5 }), fc.boolean(), async (obs, dup) => {
        const batch = dup ? [...obs, obs[0]] : obs;
        const res = await hostile(f, jsonRequest('POST', `/v1/studies/${f.a}/observations`, { observations: batch }));
        if (dup) expect(res.statusCode).toBeGreaterThanOrEqual(400);
      }),
      RUNS,
    );
  });

  it('external points: missing, extra, out-of-bounds, non-integral, non-positive log values, 10 000 parameters', async () => {
    const value = fc.oneof(num, fc.constantFrom(-5, 5, 5.000001, 0, 1e-5, 1, 1.5, 10, 11, -0));
    const point = fc.record({ x: value, lr: value, n: value }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(point, fc.dictionary(fc.oneof(hostileString, fc.constantFrom('x', 'lr', 'n', 'X')), wrongValue, { maxKeys: 3 }), num, async (p, extra, v) => {
        await hostile(f, jsonRequest('POST', `/v1/studies/${f.a}/observations`, { observations: [{ parameters: { ...p, ...extra }, value: v }] }));
      }),
      RUNS,
    );
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, 0]));
    const res = await hostile(f, jsonRequest('POST', `/v1/studies/${f.a}/observations`, { observations: [{ parameters: { x: 0, lr: 0.1, n: 3, ...many }, value: 1 }] }));
    expect(res.statusCode).toBe(400);
  });

  it('a batch with one bad observation writes none of the good ones; more than 1000 is refused whole', async () => {
    const before = await snapshot(f.app);
    const res = await hostile(f, jsonRequest('POST', `/v1/studies/${f.b}/observations`, { observations: [{ trial_id: 1, value: 1 }, { parameters: { x: 0, lr: 0.1, n: 3 }, value: 1 }, { trial_id: 2, value: '2' }] }));
    expect(res.statusCode).toBe(400);
    expect(await snapshot(f.app)).toBe(before);
    const big = { observations: Array.from({ length: 1001 }, () => ({ parameters: { x: 0, lr: 0.1, n: 3 }, value: 1 })) };
    expect((await hostile(f, jsonRequest('POST', `/v1/studies/${f.b}/observations`, big))).statusCode).toBe(400);
  });
});

/** The three trial actions take the same kinds of input. */
for (const action of ['heartbeat', 'fail', 'abandon'] as const) {
  describe(route(`POST /v1/studies/{study_id}/trials/{trial_id}/${action}`), () => {
    const valid: Record<string, unknown> = action === 'fail' ? { reason: 'out of memory', client_id: 'w2' } : { client_id: 'w2' };

    it('hostile trial ids (unknown, another study\'s, not integers) and mutated bodies', async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(trialId.map(String), hostileId), mutations, fc.constantFrom('a', 'b'), async (tid, ms, which) => {
          const study = which === 'a' ? f.a : f.b;
          await hostile(f, jsonRequest('POST', `/v1/studies/${study}/trials/${enc(tid)}/${action}`, mutate(valid, ms)));
          await hostile(f, jsonRequest('POST', `/v1/studies/${study}/trials/${1 + (ms[0]!.pick % 8)}/${action}`, mutate(valid, ms)));
        }),
        RUNS,
      );
    });

    it('reasons and client ids with control, unicode and SQL-looking characters', async () => {
      await fc.assert(
        fc.asyncProperty(hostileString, hostileString, fc.integer({ min: 1, max: 8 }), async (reason, client, tid) => {
          await hostile(f, jsonRequest('POST', `/v1/studies/${f.b}/trials/${tid}/${action}`, action === 'fail' ? { reason, client_id: client } : { client_id: client }));
        }),
        runs(20),
      );
    });
  });
}

describe('results at the extremes of a double reach every kind of model', () => {
  it('values such as ±1e308 and 5e-324 complete generations, and the next suggestions are still computed', async () => {
    const extreme = fc.constantFrom(1e308, -1e308, 1.7976931348623157e308, 5e-324, -0, 0, 1e300, -1e-300, 1);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('prob-cmaes', 'bo', 'cmaes', 'xnes', 'snes'), fc.array(extreme, { minLength: 4, maxLength: 4 }), async (method, values) => {
        const options = method === 'prob-cmaes' ? { candidates: 64 } : method === 'bo' ? { candidates: 100, mc_samples: 16 } : {};
        const created = await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'extreme', method, batch_size: 2, options, parameters: [{ name: 'x', bounds: [-1, 1] }, { name: 'y', bounds: [0, 2] }] }), { snap: false, keep: true });
        expect(created.statusCode).toBe(201);
        const id = created.json().id as string;
        try {
          for (let g = 0; g < 2; g++) {
            const s = await hostile(f, { method: 'GET', url: `/v1/studies/${id}/suggestions?count=2` }, { snap: false });
            expect(s.statusCode).toBe(200);
            const ids = (s.json().trials as { trial_id: number }[]).map((t) => t.trial_id);
            await hostile(f, jsonRequest('POST', `/v1/studies/${id}/observations`, { observations: ids.map((t, i) => ({ trial_id: t, value: values[2 * g + i] })) }), { snap: false });
          }
          for (const r of ['suggestions?count=2', 'best', 'distribution', 'history']) expect((await hostile(f, { method: 'GET', url: `/v1/studies/${id}/${r}` }, { snap: false })).statusCode).toBe(200);
        } finally {
          await f.app.inject({ method: 'DELETE', url: `/v1/studies/${id}` });
        }
      }),
      runs(12),
    );
    // A GP fit per generation for ProbNES and BO: slow only when the machine is saturated.
  }, 180_000);
});
