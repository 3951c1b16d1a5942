/**
 * The trial lifecycle over HTTP with an injected clock: leases (expiry, re-attach, heartbeat),
 * fail/abandon, generation bookkeeping (joint batch, extras with pending points, superseded
 * trials), max_trials, paused/completed studies, and an engine update that fails and is retried.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { EngineError } from '../../src/engine/index.js';
import { braninStudy, clock, loopApp, type Clock } from '../helpers/loop.js';

let app: FastifyInstance;
let id: string;
let t: Clock;
afterEach(async () => {
  await app.close();
});

async function setup(body: Record<string, unknown> = {}, engine?: EngineRunner) {
  t = clock();
  ({ app } = await loopApp({ clock: t, ...(engine ? { engine } : {}) }));
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { lease_seconds: 60, ...body }) });
  expect(res.statusCode, res.body).toBe(201);
  id = res.json().id;
}

type Trial = { trial_id: number; state: string; generation: number; client_id: string | null; lease_expires_at: string | null; failure_reason: string | null; parameters: Record<string, number> };
const suggest = async (count: number, client?: string) => {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}${client ? `&client_id=${client}` : ''}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { trials: Trial[]; reason: string | null; generation: number };
};
const ids = (ts: { trial_id: number }[]) => ts.map((x) => x.trial_id);
const observe = async (obs: { trial_id: number; value: number }[]) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
const action = (trial: number, what: string, payload?: object) => app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${trial}/${what}`, ...(payload ? { payload } : {}) });
const trial = async (n: number): Promise<Trial> => (await action(n, 'heartbeat')).json();
const study = async () => (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();

describe('leases', () => {
  it('a client gets its ACTIVE trials back first: retries never create work; default client when omitted', async () => {
    await setup();
    const first = await suggest(2, 'w1');
    expect(ids(first.trials)).toEqual([1, 2]);
    expect(first.trials[0]).toMatchObject({ state: 'ACTIVE', client_id: 'w1', lease_expires_at: '2025-01-01T12:01:00.000Z', generation: 0 });
    t.advance(10_000);
    const again = await suggest(2, 'w1');
    expect(ids(again.trials)).toEqual([1, 2]);
    expect(again.trials[0]!.lease_expires_at).toBe('2025-01-01T12:01:10.000Z'); // renewed
    expect(ids((await suggest(3, 'w1')).trials)).toEqual([1, 2, 3]);
    expect((await suggest(1)).trials[0]).toMatchObject({ trial_id: 4, client_id: 'default' });
    expect((await study()).trial_counts).toMatchObject({ ACTIVE: 4, REQUESTED: 0 });
  });

  it('an expired lease puts the same point back to REQUESTED; the next client gets it; a late result is accepted', async () => {
    await setup();
    const [a] = (await suggest(1, 'w1')).trials;
    t.advance(60_000);
    const b = (await suggest(1, 'w2')).trials[0]!;
    expect(b).toMatchObject({ trial_id: a!.trial_id, client_id: 'w2', state: 'ACTIVE' });
    // The same point: the trial as stored now, and as handed to w2, has the parameters w1 got.
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials/${a!.trial_id}` });
    expect(res.statusCode).toBe(200);
    expect(a!.parameters).toBeDefined();
    expect(res.json().parameters).toEqual(a!.parameters);
    expect(b.parameters).toEqual(a!.parameters);
    // w1 comes back late with the result: accepted.
    expect((await observe([{ trial_id: a!.trial_id, value: 3 }])).statusCode).toBe(200);
    expect(ids((await suggest(1, 'w2')).trials)).not.toContain(a!.trial_id);
  });

  it('heartbeat extends the lease, checks the holder when named, and reclaims an expired lease nobody took', async () => {
    await setup();
    const [a] = (await suggest(1, 'w1')).trials;
    t.advance(30_000);
    const hb = await action(a!.trial_id, 'heartbeat', { client_id: 'w1' });
    expect(hb.statusCode).toBe(200);
    expect(hb.json().lease_expires_at).toBe('2025-01-01T12:01:30.000Z');
    const other = await action(a!.trial_id, 'heartbeat', { client_id: 'w2' });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('lease_not_held');
    t.advance(120_000); // expired, nobody took it
    const back = await action(a!.trial_id, 'heartbeat', { client_id: 'w1' });
    expect(back.json()).toMatchObject({ state: 'ACTIVE', client_id: 'w1', lease_expires_at: '2025-01-01T12:03:30.000Z' });
    expect((await action(99, 'heartbeat')).json().code).toBe('trial_not_found');
    await observe([{ trial_id: a!.trial_id, value: 1 }]);
    expect((await action(a!.trial_id, 'heartbeat')).json().code).toBe('trial_not_active');
  });
});

describe('fail and abandon', () => {
  it('are final, idempotent, never used by the model, and replaced by extra points', async () => {
    await setup();
    const [a, b, c] = (await suggest(3, 'w')).trials;
    const failed = await action(a!.trial_id, 'fail', { reason: 'CUDA out of memory', client_id: 'w' });
    expect(failed.json()).toMatchObject({ state: 'FAILED', failure_reason: 'CUDA out of memory', lease_expires_at: null });
    expect((await action(a!.trial_id, 'fail', { reason: 'again' })).json().failure_reason).toBe('CUDA out of memory');
    expect((await action(b!.trial_id, 'abandon', { client_id: 'x' })).json().code).toBe('lease_not_held');
    expect((await action(b!.trial_id, 'abandon')).json()).toMatchObject({ state: 'ABANDONED', failure_reason: 'abandoned_by_client' });
    expect((await action(a!.trial_id, 'abandon')).json().code).toBe('trial_not_active');
    expect((await action(b!.trial_id, 'fail', { reason: 'x' })).json().code).toBe('trial_not_active');
    expect((await action(b!.trial_id, 'fail', {})).statusCode).toBe(400);
    await observe([{ trial_id: c!.trial_id, value: 1 }]);
    expect((await action(c!.trial_id, 'fail', { reason: 'x' })).json().code).toBe('trial_already_completed');
    // The generation needs two more results: extras of generation 0.
    const extra = await suggest(2, 'w');
    expect(extra.trials.map((x) => [x.trial_id, x.generation])).toEqual([[4, 0], [5, 0]]);
    expect((await (await observe(extra.trials.map((x) => ({ trial_id: x.trial_id, value: 2 })))).json()).generation).toBe(1);
  });
});

describe('generation bookkeeping', () => {
  it('asks for the rest of the joint batch, then extras; the update supersedes REQUESTED points of the old generation', async () => {
    await setup({ batch_size: 4 });
    const a = await suggest(1, 'w1'); // the engine is asked for the whole batch of 4
    expect(ids(a.trials)).toEqual([1]);
    expect((await study()).trial_counts).toMatchObject({ ACTIVE: 1, REQUESTED: 3 });
    expect(ids((await suggest(4, 'w2')).trials)).toEqual([2, 3, 4, 5]); // 3 of the batch + 1 extra
    const s = await study();
    expect(s.trial_counts).toMatchObject({ ACTIVE: 5, REQUESTED: 0 });
    // Results for 2, 3, 4, 5 complete the generation (batch = first four completed in trial order).
    const o = await observe([2, 3, 4, 5].map((n) => ({ trial_id: n, value: n })));
    expect(o.json()).toMatchObject({ generation: 1 });
    // Trial 1 is still ACTIVE (from generation 0); its result joins the history later.
    expect((await trial(1)).state).toBe('ACTIVE');
    const g1 = await suggest(1, 'w3');
    expect(g1.trials[0]).toMatchObject({ trial_id: 6, generation: 1 });
    expect(await observe([{ trial_id: 1, value: 0.5 }])).toMatchObject({ statusCode: 200 });
    expect((await study()).generation).toBe(1);
  });

  it('REQUESTED points of an older generation (back from expired leases) are ABANDONED as superseded by the update', async () => {
    await setup({ batch_size: 3 });
    expect(ids((await suggest(3, 'w1')).trials)).toEqual([1, 2, 3]);
    expect(ids((await suggest(2, 'w2')).trials)).toEqual([4, 5]); // extras of generation 0
    t.advance(30_000);
    await action(4, 'heartbeat');
    await action(5, 'heartbeat');
    t.advance(40_000); // w1's leases expired, w2's not
    // Late result for 1 plus 4 and 5: the generation is complete (first three completed: 1, 4, 5).
    const o = await observe([1, 4, 5].map((n) => ({ trial_id: n, value: n })));
    expect(o.json().generation).toBe(1);
    for (const n of [2, 3]) expect((await action(n, 'heartbeat')).json().code).toBe('trial_not_active');
    const listed = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials?state=ABANDONED` })).json();
    expect(listed.trials.map((x: Trial) => [x.trial_id, x.failure_reason])).toEqual([[2, 'superseded'], [3, 'superseded']]);
    expect((await suggest(1, 'w3')).trials[0]).toMatchObject({ trial_id: 6, generation: 1 });
  });

  it('never answers empty while ACTIVE: once the generation is out, every request gets extra points', async () => {
    await setup({ batch_size: 2 });
    const seen = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const s = await suggest(2, `w${i}`);
      expect(s.trials).toHaveLength(2);
      expect(s.reason).toBeNull();
      for (const x of s.trials) {
        expect(seen.has(x.trial_id)).toBe(false);
        seen.add(x.trial_id);
        expect(x.generation).toBe(0);
      }
    }
  });
});

describe('study states and budget', () => {
  it('max_trials caps the points created; when its results are in the study is COMPLETED', async () => {
    await setup({ batch_size: 2, max_trials: 5 });
    const a = await suggest(4, 'w');
    expect(ids(a.trials)).toEqual([1, 2, 3, 4]);
    const b = await suggest(3, 'v');
    expect(b).toMatchObject({ reason: 'max_trials_reached' });
    expect(ids(b.trials)).toEqual([5]);
    expect((await suggest(1, 'u')).trials).toEqual([]);
    await action(5, 'fail', { reason: 'crash' }); // a failed point frees its slot
    expect(ids((await suggest(1, 'u')).trials)).toEqual([6]);
    const done = await observe([1, 2, 3, 4, 6].map((n) => ({ trial_id: n, value: n })));
    // 1 and 2 complete generation 0; 3, 4, 6 are its extras (their results are data, not a new batch).
    expect(done.json()).toMatchObject({ study_state: 'COMPLETED', generation: 1 });
    expect(await study()).toMatchObject({ state: 'COMPLETED', reason: 'max_trials_reached' });
    expect(await suggest(1, 'w')).toMatchObject({ trials: [], reason: 'study_completed' });
  });

  it('a PAUSED study hands back held trials but no new ones; resuming continues', async () => {
    await setup();
    await suggest(1, 'w');
    await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload: { state: 'PAUSED' } });
    const p = await suggest(2, 'w');
    expect(p).toMatchObject({ reason: 'study_paused' });
    expect(ids(p.trials)).toEqual([1]);
    expect(await suggest(1, 'x')).toMatchObject({ trials: [], reason: 'study_paused' });
    await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload: { state: 'ACTIVE' } });
    expect(ids((await suggest(1, 'x')).trials)).toEqual([2]);
  });
});

/** Inline runner whose tell throws a typed engine error the first `failures` times. */
class FlakyTell implements EngineRunner {
  private readonly inner = new InlineEngineRunner();
  tells = 0;
  constructor(private failures: number) {}
  async run(task: EngineTask) {
    if (task.op === 'tell') {
      this.tells++;
      if (this.failures-- > 0) throw new EngineError('not_positive_definite', 'simulated');
    }
    return this.inner.run(task);
  }
  async close() {}
}

describe('engine failure during an update', () => {
  it('keeps the results, answers 200, and retries the update on the next request', async () => {
    const flaky = new FlakyTell(1);
    await setup({}, flaky);
    const s = await suggest(3, 'w');
    const o = await observe(s.trials.map((x) => ({ trial_id: x.trial_id, value: x.trial_id })));
    expect(o.statusCode).toBe(200);
    expect(o.json()).toMatchObject({ generation: 0, trials: [{ state: 'COMPLETED' }, { state: 'COMPLETED' }, { state: 'COMPLETED' }] });
    expect((await study()).trial_counts.COMPLETED).toBe(3);
    const next = await suggest(1, 'w'); // retries the update first, then asks generation 1
    expect(flaky.tells).toBe(2);
    expect(next).toMatchObject({ generation: 1, trials: [{ trial_id: 4, generation: 1 }] });
    expect((await study()).generation).toBe(1);
  });
});
