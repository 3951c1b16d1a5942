/**
 * GET /v1/studies/{id}/intermediate_values in pages, and the median rule's bounded reads.
 *
 * Pages: put together in order they are every stored value (storage's listIntermediate, the
 * definition of the unpaged answer), grouped by trial, in (trial id, step) order; no page holds more
 * than page_size values, even when one trial's curve is longer than a page (it continues on the next
 * page under the same trial_id); page_size outside 1–10 000 and foreign or altered tokens are 400
 * problem+json naming the parameter; another tenant's study is 404 and a token is bound to its study.
 *
 * The rule: each answer to a report equals decideStop applied to every value of the study, as the
 * service computed it before it read only the values at the reported step (the trial's whole curve,
 * every COMPLETED trial and its value at the step).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ApiKeyService } from '../../src/domain/auth/api-keys.js';
import { INTERMEDIATE_LIMITS } from '../../src/domain/index.js';
import { readStudy } from '../../src/domain/studies/codec.js';
import { objectiveOf } from '../../src/domain/results/index.js';
import { decideStop, isStopped } from '../../src/domain/studies/stopping-rule.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
let storage: Storage;
afterEach(async () => {
  await app?.close();
});

type Curve = { trial_id: number; intermediate_values: { step: number; value: number }[] };
type CurvesPage = { trials: Curve[]; next_page_token: string | null };

/** A linear congruential generator: the same pseudo-random study on every run. */
function lcg(seed: number) {
  let x = seed;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

async function create(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', batch_size: 1, ...extra }) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

let clients = 0;
async function suggest(id: string): Promise<number> {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=w${++clients}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().trials[0].trial_id as number;
}

const report = (id: string, trial: number, step: number, value: number) => app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${trial}/intermediate`, payload: { step, value } });

async function observe(id: string, trial: number, value: number, stopped = false) {
  const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: trial, value, stopped }] } });
  expect(res.statusCode, res.body).toBe(200);
}

/**
 * A study with `n` trials whose curves have pseudo-random lengths (0–`maxSteps` steps, some with gaps),
 * one of them `longest` steps long; values written straight through storage.
 */
async function studyWithCurves(n: number, maxSteps: number, longest: number): Promise<string> {
  const id = await create();
  const rnd = lcg(11);
  const trials: number[] = [];
  for (let i = 0; i < n; i++) trials.push(await suggest(id));
  for (const [i, t] of trials.entries()) {
    const steps = i === 3 ? longest : Math.floor(rnd() * (maxSteps + 1));
    for (let s = 0; s < steps; s++) {
      if (rnd() < 0.2) continue;
      await storage.recordIntermediate(id, { trialId: t, step: s * 2, value: Math.round(rnd() * 1000) / 100, createdAt: '2025-01-01T00:00:00.000Z' });
    }
  }
  return id;
}

/** Every page of the listing, following next_page_token. */
async function walk(id: string, query: string): Promise<CurvesPage[]> {
  const pages: CurvesPage[] = [];
  let token: string | null = null;
  do {
    const url: string = `/v1/studies/${id}/intermediate_values?${query}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as CurvesPage;
    pages.push(page);
    token = page.next_page_token;
    expect(pages.length).toBeLessThan(1000);
  } while (token);
  return pages;
}

const flat = (pages: CurvesPage[]) => pages.flatMap((p) => p.trials.flatMap((c) => c.intermediate_values.map((v) => ({ trialId: c.trial_id, step: v.step, value: v.value }))));
const count = (p: CurvesPage) => p.trials.reduce((n, c) => n + c.intermediate_values.length, 0);

describe('GET intermediate_values in pages', () => {
  it('pages put together are every stored value, in (trial id, step) order, none holding more than page_size', async () => {
    ({ app, storage } = await makeTestApp());
    const id = await studyWithCurves(40, 12, 45);
    const expected = (await storage.listIntermediate(id)).map((r) => ({ trialId: r.trialId, step: r.step, value: r.value }));
    expect(expected.length).toBeGreaterThan(150);
    for (const size of [1, 7, 13, 100]) {
      const pages = await walk(id, `page_size=${size}`);
      expect(flat(pages), `page_size=${size}`).toEqual(expected);
      // Every page but the last is full; the last is not empty unless it is the only one.
      for (const p of pages.slice(0, -1)) expect(count(p)).toBe(size);
      expect(count(pages[pages.length - 1]!)).toBeGreaterThan(0);
      expect(count(pages[pages.length - 1]!)).toBeLessThanOrEqual(size);
      expect(pages).toHaveLength(Math.ceil(expected.length / size));
      // Within a page, one entry per trial, ascending; across pages only the boundary trial repeats.
      for (const p of pages) {
        const ids = p.trials.map((c) => c.trial_id);
        expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
      }
    }
    // The 45-step trial (the fourth) is longer than a page of 13: its curve spans consecutive pages.
    const long = (await walk(id, 'page_size=13')).filter((p) => p.trials.some((c) => c.intermediate_values.length > 0 && c.trial_id === 4));
    expect(long.length).toBeGreaterThan(1);
    // One page holds them all when it is large enough; the default page is INTERMEDIATE_LIMITS.defaultPageSize values.
    const whole = await walk(id, `page_size=${INTERMEDIATE_LIMITS.maxPageSize}`);
    expect(whole).toHaveLength(1);
    expect(flat(whole)).toEqual(expected);
    const first = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/intermediate_values` })).json() as CurvesPage;
    expect(count(first)).toBe(Math.min(expected.length, INTERMEDIATE_LIMITS.defaultPageSize));
  });

  it('a study without values is one empty page; values reported after the walk passed them appear on the next walk', async () => {
    ({ app, storage } = await makeTestApp());
    const id = await create();
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}/intermediate_values` })).json()).toEqual({ trials: [], next_page_token: null });
    const a = await suggest(id);
    const b = await suggest(id);
    for (const s of [2, 4, 6]) await report(id, a, s, s);
    await report(id, b, 0, 9);
    const p1 = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/intermediate_values?page_size=2` })).json() as CurvesPage;
    expect(p1.trials).toEqual([{ trial_id: a, intermediate_values: [{ step: 2, value: 2 }, { step: 4, value: 4 }] }]);
    // The walk stands after (a, 4): a new value at (a, 3) is behind it, (a, 5) and (b, 3) ahead.
    await report(id, a, 3, 3);
    await report(id, a, 5, 5);
    await report(id, b, 3, 3);
    const p2 = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/intermediate_values?page_size=10&page_token=${encodeURIComponent(p1.next_page_token!)}` })).json() as CurvesPage;
    expect(p2).toEqual({
      trials: [
        { trial_id: a, intermediate_values: [{ step: 5, value: 5 }, { step: 6, value: 6 }] },
        { trial_id: b, intermediate_values: [{ step: 0, value: 9 }, { step: 3, value: 3 }] },
      ],
      next_page_token: null,
    });
    const again = (await walk(id, 'page_size=10'))[0]!;
    expect(again.trials[0]!.intermediate_values.map((v) => v.step)).toEqual([2, 3, 4, 5, 6]);
  });

  it('page_size outside 1–10 000 or not an integer, and altered or foreign tokens, are 400 problem+json naming the parameter', async () => {
    ({ app, storage } = await makeTestApp());
    const id = await studyWithCurves(5, 6, 6);
    const other = await studyWithCurves(5, 6, 6);
    const get = (id: string, q: string) => app.inject({ method: 'GET', url: `/v1/studies/${id}/intermediate_values?${q}` });
    for (const size of ['0', '-1', '10001', '1.5', 'x', '']) {
      const res = await get(id, `page_size=${size}`);
      expect(res.statusCode, size).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().code).toBe('validation_failed');
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain('/page_size');
    }
    const token = ((await get(id, 'page_size=2')).json() as CurvesPage).next_page_token!;
    const foreign = [
      ((await get(other, 'page_size=2')).json() as CurvesPage).next_page_token!,
      (await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials?page_size=1` })).json().next_page_token as string,
    ];
    const [body, sig] = token.split('.');
    // The same signature on a body that points elsewhere, a body signed by nobody, and junk.
    const moved = Buffer.from(JSON.stringify({ v: 1, scope: `intermediate:${id}`, after: '1:0' })).toString('base64url');
    for (const bad of [...foreign, `${token}x`, `${moved}.${sig}`, `${body}.AAAAAAAAAAAAAAAAAAAAAA`, 'not-a-token', 'a.b.c']) {
      const res = await get(id, `page_size=2&page_token=${encodeURIComponent(bad)}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'invalid_page_token', detail: expect.stringContaining('page_token') });
    }
    expect((await get(id, `page_token=${'a'.repeat(4097)}`)).json().errors.map((e: { path: string }) => e.path)).toContain('/page_token');
    expect((await get(id, `page_size=2&page_token=${encodeURIComponent(token)}`)).statusCode).toBe(200);
  });

  it("another tenant's study is 404 with or without a token, and a tenant's token does not continue another study", async () => {
    storage = SqliteStorage.open(':memory:');
    app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 6000 }, storage, auth: { envKeys: [], allowOpen: false } });
    const keys = new ApiKeyService({ storage });
    const auth = async (tenant: string) => ({ authorization: `Bearer ${(await keys.create(tenant)).key}` });
    const [a, b] = [await auth('tenant-a'), await auth('tenant-b')];
    const mk = async (headers: Record<string, string>) => {
      const id = (await app.inject({ method: 'POST', url: '/v1/studies', headers, payload: studyBody({ method: 'random', batch_size: 1 }) })).json().id as string;
      const t = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=w`, headers })).json().trials[0].trial_id as number;
      for (const step of [0, 1, 2]) expect((await app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${t}/intermediate`, headers, payload: { step, value: step } })).statusCode).toBe(200);
      return id;
    };
    const [sa, sb] = [await mk(a), await mk(b)];
    const pageA = await app.inject({ method: 'GET', url: `/v1/studies/${sa}/intermediate_values?page_size=1`, headers: a });
    expect(pageA.statusCode).toBe(200);
    const token = encodeURIComponent(pageA.json().next_page_token as string);
    for (const url of [`/v1/studies/${sa}/intermediate_values`, `/v1/studies/${sa}/intermediate_values?page_size=1&page_token=${token}`]) {
      const res = await app.inject({ method: 'GET', url, headers: b });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('study_not_found');
    }
    const stolen = await app.inject({ method: 'GET', url: `/v1/studies/${sb}/intermediate_values?page_size=1&page_token=${token}`, headers: b });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().code).toBe('invalid_page_token');
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${sb}/intermediate_values`, headers: b })).json().trials).toHaveLength(1);
  });
});

describe('the median rule reads only the reported step', () => {
  for (const direction of ['minimize', 'maximize'] as const) {
    it(`every answer equals the rule applied to all of the study's values (${direction})`, async () => {
      ({ app, storage } = await makeTestApp());
      const id = await create({ direction, stopping: { rule: 'median', min_steps: 2, warmup_trials: 4 } });
      const study = readStudy((await storage.getStudy('default', id))!);
      const rnd = lcg(direction === 'minimize' ? 5 : 6);
      /** The answer as the service computed it from every value of the study (its whole curve, every COMPLETED trial). */
      const reference = async (trial: number, step: number) => {
        const [trials, values] = await Promise.all([storage.listAllTrials(id), storage.listIntermediate(id)]);
        const peers = trials.filter((t) => t.state === 'COMPLETED' && !isStopped(t));
        const peerIds = new Set(peers.map((t) => t.trialId));
        const d = decideStop(study.loop.stopping, objectiveOf({ direction: direction }), {
          step,
          own: values.filter((v) => v.trialId === trial),
          completed: peers.length,
          peersAtStep: values.filter((v) => v.step === step && peerIds.has(v.trialId)).map((v) => v.value),
        });
        return { should_stop: d.shouldStop, reason: d.reason, detail: d.detail, median: d.median };
      };
      const reasons = new Set<string>();
      for (let i = 0; i < 24; i++) {
        const t = await suggest(id);
        const steps = 1 + Math.floor(rnd() * 9);
        let last = 0;
        let stop = false;
        for (let s = 0; s < steps && !stop; s++) {
          // Some steps skipped, so that peers at a step are not all the completed trials.
          const step = s * 2 + (rnd() < 0.3 ? 1 : 0);
          last = Math.round(rnd() * 100) / 10;
          const res = await report(id, t, step, last);
          expect(res.statusCode, res.body).toBe(200);
          const { should_stop, reason, detail, median } = res.json();
          expect({ should_stop, reason, detail, median }, `trial ${t} step ${step}`).toEqual(await reference(t, step));
          reasons.add(reason);
          stop = should_stop && rnd() < 0.8;
        }
        // Stopped when told (mostly), left running one time in six, completed otherwise.
        if (stop) await observe(id, t, last, true);
        else if (rnd() > 1 / 6) await observe(id, t, last);
      }
      expect([...reasons].sort()).toEqual(['before_min_steps', 'no_peers_at_step', 'not_worse_than_median', 'warming_up', 'worse_than_median']);
    });
  }
});
