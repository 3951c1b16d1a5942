/**
 * Hostile input on several objectives, constraints and infeasible points (docs/multi-objective.md):
 * the front and its history (page sizes, tokens tampered with or issued for another listing), and
 * observations of a study with two objectives and a constraint whose values are of the wrong count,
 * type or shape. Every answer is a success or a 4xx problem, and a rejected batch changes nothing
 * a client can see (harness.ts `hostile`).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileId, hostileQueryValue, rawNumber, wrongValue } from './arbitraries.js';
import { enc, fixture, hostile, jsonRequest, Raw, route, runs, type Fixture } from './harness.js';
import { tamper, tampered } from './tokens.js';

const RUNS = runs(20);

let f: Fixture;
/** A study of two objectives and one constraint with a few results, and one of its open trials. */
let multi: string;
let open: number;
beforeAll(async () => {
  f = await fixture();
  const created = await f.app.inject({
    method: 'POST',
    url: '/v1/studies',
    payload: {
      name: 'hostile-multi',
      method: 'random',
      batch_size: 4,
      seed: 4,
      parameters: [{ name: 'x', bounds: [0, 1] }],
      objectives: [
        { name: 'a', direction: 'minimize' },
        { name: 'b', direction: 'maximize' },
      ],
      constraints: [{ name: 'c' }],
    },
  });
  multi = created.json().id;
  const trials = (await f.app.inject({ method: 'GET', url: `/v1/studies/${multi}/suggestions?count=4&client_id=w` })).json().trials as { trial_id: number }[];
  const res = await f.app.inject({
    method: 'POST',
    url: `/v1/studies/${multi}/observations`,
    payload: { observations: trials.slice(0, 3).map((t, i) => (i === 2 ? { trial_id: t.trial_id, infeasible: true } : { trial_id: t.trial_id, values: [i, i], constraints: [-1] })) },
  });
  expect(res.statusCode).toBe(200);
  open = trials[3]!.trial_id;
});
afterAll(async () => {
  await f.close();
});

for (const r of ['front', 'front/history'] as const) {
  describe(route(`GET /v1/studies/{study_id}/${r}`), () => {
    it('hostile study ids, page sizes and page tokens (tampered with, or issued for another study or listing)', async () => {
      const token = (url: string) => f.app.inject({ method: 'GET', url }).then((x) => x.json().next_page_token as string);
      const mine = await token(`/v1/studies/${multi}/${r}?page_size=1`);
      const others = [await token(`/v1/studies/${multi}/${r === 'front' ? 'front/history' : 'front'}?page_size=1`), await token(`/v1/studies/${f.a}/trials?page_size=1`), await token('/v1/studies?page_size=1')];
      expect([mine, ...others].every(Boolean)).toBe(true);
      await fc.assert(
        fc.asyncProperty(hostileId, hostileQueryValue, tamper, fc.nat(2), async (id, size, t, o) => {
          expect((await hostile(f, { method: 'GET', url: `/v1/studies/${enc(id)}/${r}` }, { snap: false })).statusCode).toBeGreaterThanOrEqual(400);
          await hostile(f, { method: 'GET', url: `/v1/studies/${multi}/${r}?page_size=${enc(size)}` }, { snap: false });
          const bad = tampered(mine, others[o]!, t);
          const res = await hostile(f, { method: 'GET', url: `/v1/studies/${multi}/${r}?page_token=${enc(bad)}` }, { snap: false });
          if (bad !== mine) expect(res.statusCode).toBe(400);
          expect((await hostile(f, { method: 'GET', url: `/v1/studies/${multi}/${r}?page_token=${enc(others[o]!)}` }, { snap: false })).statusCode).toBe(400);
        }),
        RUNS,
      );
    });
  });
}

describe('observations of several objectives and constraints', () => {
  it('values and constraints of any wrong count, type or shape, and infeasible with anything beside it: a 400 that changes nothing', async () => {
    const numberish = fc.oneof(rawNumber, wrongValue);
    const list = fc.oneof(fc.array(numberish, { maxLength: 8 }), wrongValue, fc.constant(new Raw('[1e999, 1]')), fc.constant(new Raw('[NaN, 1]')));
    const body = fc.record(
      {
        values: list,
        constraints: list,
        value: numberish,
        infeasible: fc.oneof(fc.boolean(), wrongValue),
        stderr: numberish,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (b, byParameters) => {
        const obs = byParameters ? { parameters: { x: 0.5 }, ...b } : { trial_id: open, ...b };
        const res = await hostile(f, jsonRequest('POST', `/v1/studies/${multi}/observations`, { observations: [obs] }));
        if (res.statusCode === 200) {
          // Accepted: then it was well formed for this study (two finite values, one constraint, or infeasible alone).
          const t = res.json().trials[0] as { values: number[] | null; constraints: number[] | null; infeasible: boolean };
          expect(t.infeasible || (t.values!.length === 2 && t.constraints!.length === 1)).toBe(true);
        }
      }),
      RUNS,
    );
  });
});
