/** Hostile input on early stopping: intermediate reports and the curves listing (its page_size and page_token too). */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileId, hostileQueryValue, mutations, mutate, numberAsString, rawNumber } from './arbitraries.js';
import { tamper, tampered } from './tokens.js';
import { enc, fixture, hostile, jsonRequest, route, runs, type Fixture } from './harness.js';

const RUNS = runs(20);

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
});
afterAll(async () => {
  await f.close();
});

/** Steps: negative, fractional, beyond 2³¹ − 1, as strings and raw JSON numbers, and ordinary ones. */
const step = fc.oneof(fc.constantFrom(-1, 0, 0.5, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 53, 1e308), rawNumber, numberAsString, fc.integer({ min: 0, max: 20 }));
const value = fc.oneof(rawNumber, numberAsString, fc.double(), fc.constantFrom(-0, 0, 1e308, -1e308, 5e-324));
/** Trial ids: unknown, another study's (5–8 exist only in B), FAILED (3 in A), COMPLETED (1, 2 in A), not integers. */
const trialId = fc.oneof(fc.constantFrom('0', '-1', '1.5', '1', '2', '3', '4', '5', '99', String(2 ** 53)), hostileId);

describe(route('POST /v1/studies/{study_id}/trials/{trial_id}/intermediate'), () => {
  it('mutations of a valid report (wrong types, missing and extra fields, extreme numbers)', async () => {
    await fc.assert(
      fc.asyncProperty(mutations, fc.constantFrom('a', 'b'), async (ms, which) => {
        const study = which === 'a' ? f.a : f.b;
        await hostile(f, jsonRequest('POST', `/v1/studies/${study}/trials/4/intermediate`, mutate({ step: 1, value: 0.5 }, ms)));
      }),
      RUNS,
    );
  });

  it('hostile steps, values and trial ids; a finished trial takes no new step; a second value for a step is a conflict', async () => {
    await fc.assert(
      fc.asyncProperty(trialId, step, value, async (tid, s, v) => {
        await hostile(f, jsonRequest('POST', `/v1/studies/${f.a}/trials/${enc(tid)}/intermediate`, { step: s, value: v }));
      }),
      RUNS,
    );
    // Trial 1 of A is COMPLETED and never reported: 409; trial 6 of B is ACTIVE: a report, then another value for it.
    expect((await hostile(f, jsonRequest('POST', `/v1/studies/${f.a}/trials/1/intermediate`, { step: 0, value: 1 }))).statusCode).toBe(409);
    expect((await hostile(f, jsonRequest('POST', `/v1/studies/${f.b}/trials/6/intermediate`, { step: 7, value: 1 }))).statusCode).toBe(200);
    const conflict = await hostile(f, jsonRequest('POST', `/v1/studies/${f.b}/trials/6/intermediate`, { step: 7, value: 2 }));
    expect(conflict.statusCode).toBe(409);
  });
});

describe(route('GET /v1/studies/{study_id}/intermediate_values'), () => {
  it('unknown and hostile study ids', async () => {
    await fc.assert(
      fc.asyncProperty(hostileId, async (id) => {
        const res = await hostile(f, { method: 'GET', url: `/v1/studies/${enc(id)}/intermediate_values` }, { snap: false });
        if (res.statusCode === 200) expect(Array.isArray(res.json().trials)).toBe(true);
      }),
      RUNS,
    );
    expect((await hostile(f, { method: 'GET', url: `/v1/studies/${f.b}/intermediate_values?extra=1` })).statusCode).toBeLessThan(500);
  });

  it('hostile page_size and page_token values; tokens tampered with or issued for another listing', async () => {
    // Two values in A (trial 4 is ACTIVE there), so that a page of one has a next page.
    for (const step of [1000, 1001]) expect((await f.app.inject({ method: 'POST', url: `/v1/studies/${f.a}/trials/4/intermediate`, payload: { step, value: step } })).statusCode).toBe(200);
    const token = (url: string) => f.app.inject({ method: 'GET', url }).then((r) => r.json().next_page_token as string);
    const mine = await token(`/v1/studies/${f.a}/intermediate_values?page_size=1`);
    // Valid tokens, but for other listings: A's trials, the study list.
    const others = [await token(`/v1/studies/${f.a}/trials?page_size=1`), await token('/v1/studies?page_size=1')];
    expect([mine, ...others].every(Boolean)).toBe(true);
    await fc.assert(
      fc.asyncProperty(hostileQueryValue, tamper, fc.nat(1), async (size, t, o) => {
        const sized = await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/intermediate_values?page_size=${enc(size)}` }, { snap: false });
        if (sized.statusCode === 200) expect(sized.json().trials.flatMap((c: { intermediate_values: unknown[] }) => c.intermediate_values).length).toBeLessThanOrEqual(10_000);
        const bad = tampered(mine, others[o]!, t);
        const res = await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/intermediate_values?page_token=${enc(bad)}` }, { snap: false });
        if (bad !== mine) expect(res.statusCode).toBe(400);
        expect((await hostile(f, { method: 'GET', url: `/v1/studies/${f.a}/intermediate_values?page_token=${enc(others[o]!)}` }, { snap: false })).statusCode).toBe(400);
      }),
      RUNS,
    );
  });
});
