import { importedEvaluations } from '../../src/domain/results/index.js';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { InlineEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { LoopService } from '../../src/domain/loop/loop.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { StudyTransfer } from '../../src/domain/transfer/study-transfer.js';
import type { StudyDocument } from '../../src/domain/transfer/study-document.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
let storage: Storage;
let loop: LoopService;
const now = () => new Date(Date.UTC(2025, 0, 3, 0, 0, 0));

beforeEach(async () => {
  ({ app, storage } = await makeTestApp());
  app.addHook('onRequest', async (req) => {
    if (typeof req.headers['x-tenant'] === 'string') req.tenantId = req.headers['x-tenant'];
  });
  loop = new LoopService({ storage, runner: new InlineEngineRunner(), now });
});
afterEach(async () => {
  await app.close();
});

/** A smooth objective in user units. */
// Every parameter of these studies is numeric, so a trial's values are numbers.
const f = (p: Record<string, unknown>) => ((p.x as number) - 0.5) ** 2 + (Math.log(p.lr as number) + 4) ** 2 / 10;

type Doc = { study: Record<string, unknown>; trials: Record<string, unknown>[]; engine_states: Record<string, unknown>[]; [k: string]: unknown };

/** A study with some history: full generations, a half-done one (ACTIVE trials), an external point. */
async function studyWithHistory(method = 'prob-cmaes'): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method, batch_size: 3, seed: 11, known_optimum: 0 }) });
  const id: string = res.json().id;
  for (let g = 0; g < 3; g++) {
    const s = await loop.suggest('default', id, 3, 'w1');
    await loop.observe('default', id, s.trials.map((t) => ({ trial_id: t.trialId, value: f(t.parameters) })));
  }
  await loop.observe('default', id, [{ parameters: { x: 0.4, lr: 0.02 }, value: f({ x: 0.4, lr: 0.02 }) }]);
  const half = await loop.suggest('default', id, 3, 'w1');
  await loop.observe('default', id, [{ trial_id: half.trials[0]!.trialId, value: f(half.trials[0]!.parameters) }]);
  return id;
}

const exportDoc = async (id: string): Promise<Doc> => {
  const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/export` });
  expect(res.statusCode).toBe(200);
  return res.json() as Doc;
};
const importDoc = (doc: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/v1/studies/import', payload: typeof doc === 'string' ? doc : JSON.stringify(doc), headers: { 'content-type': 'application/json', ...headers } });

/** What must survive a round trip: everything but the ids and the times of the copy itself. */
function comparable(doc: Doc) {
  const { id: _id, created_at: _c, updated_at: _u, ...study } = doc.study;
  return { ...doc, exported_at: null, study };
}

describe('GET /v1/studies/{id}/export', () => {
  it('is one document with the study, every trial (internal points included) and every engine state', async () => {
    const id = await studyWithHistory();
    const doc = await exportDoc(id);
    expect(doc).toMatchObject({ format: 'probnes-study', version: 1, study: { id, method: 'prob-cmaes', seed: 11, generation: 3, state: 'ACTIVE' } });
    expect(doc.trials.map((t) => t.trial_id)).toEqual(doc.trials.map((_, i) => i + 1));
    expect(doc.trials.every((t) => Array.isArray(t.point))).toBe(true);
    expect(doc.trials.filter((t) => t.state === 'ACTIVE')).toHaveLength(2);
    expect(doc.trials.filter((t) => t.source === 'external')).toHaveLength(1);
    expect(doc.engine_states.map((e) => e.generation)).toEqual([0, 1, 2, 3]);
    expect(doc.engine_states[3]!.state).toMatchObject({ method: 'prob-cmaes', generation: 3, rng: { kind: 'xoroshiro128plus' } });
  });

  it('404 for an unknown study and for another tenant\'s', async () => {
    const id = await studyWithHistory('random');
    expect((await app.inject({ method: 'GET', url: '/v1/studies/nope/export' })).json()).toMatchObject({ status: 404, code: 'study_not_found' });
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}/export`, headers: { 'x-tenant': 'other' } })).json()).toMatchObject({ status: 404, code: 'study_not_found' });
  });
});

describe('POST /v1/studies/import', () => {
  it('creates a new study (201, Location, new id) whose export equals the original\'s', async () => {
    const id = await studyWithHistory();
    const original = await exportDoc(id);
    const res = await importDoc(original);
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.id).not.toBe(id);
    expect(res.headers.location).toBe(`/v1/studies/${created.id}`);
    const before = (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
    const { id: _a, created_at: _b, updated_at: _c, ...same } = before;
    expect(created).toMatchObject(same);
    expect(comparable(await exportDoc(created.id))).toEqual(comparable(original));
  });

  it('the copy continues identically: same next suggestions, same updates, same best', async () => {
    const a = await studyWithHistory();
    const b: string = (await importDoc(await exportDoc(a))).json().id;
    for (let round = 0; round < 3; round++) {
      // A new client: the two ACTIVE trials stay leased to w1, so this asks the engine for new points.
      const [sa, sb] = [await loop.suggest('default', a, 3, 'w2'), await loop.suggest('default', b, 3, 'w2')];
      expect(sb.trials.map((t) => [t.trialId, t.parameters, t.generation])).toEqual(sa.trials.map((t) => [t.trialId, t.parameters, t.generation]));
      const values = sa.trials.map((t) => ({ trial_id: t.trialId, value: f(t.parameters) }));
      await loop.observe('default', a, values);
      await loop.observe('default', b, values);
    }
    const best = async (id: string) => (await app.inject({ method: 'GET', url: `/v1/studies/${id}/best` })).json();
    expect(await best(b)).toEqual(await best(a));
    const dist = async (id: string) => (await app.inject({ method: 'GET', url: `/v1/studies/${id}/distribution` })).json();
    expect(await dist(b)).toEqual(await dist(a));
  });

  it.each([['prob-cmaes', 3], ['lq-cmaes', 6]])('over HTTP: an exported %s study imported elsewhere hands out the same next suggestions', async (method, batchSize) => {
    const suggest = (id: string, client: string) => app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=${client}` });
    const observe = (id: string, obs: unknown[]) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
    const a: string = (await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method, batch_size: batchSize, seed: 5 }) })).json().id;
    for (let g = 0; g < 2; g++) {
      const trials = (await suggest(a, 'w1')).json().trials as { trial_id: number; parameters: Record<string, number> }[];
      expect((await observe(a, trials.map((t) => ({ trial_id: t.trial_id, value: f(t.parameters) })))).statusCode).toBe(200);
    }
    const doc = await exportDoc(a);
    // "Elsewhere": a second server with its own database, whose clock is later (the loop orders the
    // history by completion time, so results reported after the import must come after the original's).
    let tick = 0;
    const other = { app: await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000 }, storage: SqliteStorage.open(':memory:'), service: { now: () => new Date(Date.UTC(2025, 5, 1, 0, 0, 0, tick++)) } }) };
    const imported = await other.app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imported.statusCode).toBe(201);
    const b: string = imported.json().id;
    for (let round = 0; round < 2; round++) {
      const ra = (await suggest(a, 'w2')).json();
      const rb = (await other.app.inject({ method: 'GET', url: `/v1/studies/${b}/suggestions?count=3&client_id=w2` })).json();
      const strip = (r: { trials: Record<string, unknown>[] }) => r.trials.map((t) => [t.trial_id, t.parameters, t.generation]);
      expect(strip(rb)).toEqual(strip(ra));
      const obs = ra.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: f(t.parameters) }));
      await observe(a, obs);
      await other.app.inject({ method: 'POST', url: `/v1/studies/${b}/observations`, payload: { observations: obs } });
    }
    await other.app.close();
  });

  const tamper: [string, (d: Doc) => void, string][] = [
    ['a COMPLETED trial without its value', (d) => (d.trials.find((t) => t.state === 'COMPLETED')!.value = null), '/trials/0/value'],
    ['a point that is not the parameters\' coordinates', (d) => ((d.trials[1]!.point as number[])[0]! += 0.5), '/trials/1/point'],
    ['a trial with a parameter too many', (d) => ((d.trials[2]!.parameters as Record<string, number>).y = 1), '/trials/2/parameters'],
    ['duplicate trial ids', (d) => (d.trials[3]!.trial_id = d.trials[2]!.trial_id), '/trials/3/trial_id'],
    ['a study generation without its engine state', (d) => (d.study.generation = 7), '/study/generation'],
    ['an engine state for another dimension', (d) => ((d.engine_states[1]!.state as { mean: number[] }).mean.push(0)), '/engine_states/1/state/mean'],
    ['an engine state under another generation', (d) => ((d.engine_states[1]!.state as { generation: number }).generation = 0), '/engine_states/1/state/generation'],
    ['an older generation with a newer revision', (d) => (d.engine_states[0]!.revision = 50), '/engine_states/1/revision'],
    ['a covariance that is not positive definite', (d) => ((d.study.prior as { covariance: number[][] }).covariance[0]![0] = -1), '/study/prior/covariance'],
    ['a prior marginal that disagrees with the joint prior', (d) => ((d.study.parameters as { prior: { std: number } }[])[0]!.prior.std = 3), '/study/parameters/0/prior'],
    ['an unknown option', (d) => ((d.study.options as Record<string, unknown>).bogus = 1), '/study/options/bogus'],
    ['an unknown field', (d) => ((d.study as Record<string, unknown>).owner = 'x'), '/study/owner'],
    ['another format', (d) => (d.format = 'csv'), '/format'],
    ['a negative stderr', (d) => (d.trials[0]!.stderr = -1), '/trials/0/stderr'],
  ];
  it.each(tamper)('400 validation_failed with the path: %s', async (_name, change, path) => {
    const doc = await exportDoc(await studyWithHistory('random'));
    change(doc);
    const res = await importDoc(doc);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('400 for a non-finite number anywhere, engine state included (1e999 parses to Infinity), and nothing is written', async () => {
    const id = await studyWithHistory('random');
    const text = JSON.stringify(await exportDoc(id));
    const before = (await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.length;
    const inState = text.replace(/("engine_states":\[\{.*?"mean":\[)[^,\]]+/, '$11e999');
    const res = await importDoc(inState);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({ path: '/engine_states/0/state/mean/0', message: 'must be a finite number' });
    const inTrial = text.replace(/("value":)[-0-9.e]+/, '$11e999');
    expect((await importDoc(inTrial)).json().errors[0].path).toMatch(/^\/trials\/\d+\/value$/);
    expect((await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.length).toBe(before);
  });

  it('the dry run of an import (ask and estimate on the latest state) goes through the engine runner, not the event loop', async () => {
    const doc = await exportDoc(await studyWithHistory('prob-cmaes'));
    const tasks: EngineTask['op'][] = [];
    const inline = new InlineEngineRunner();
    const transfer = new StudyTransfer({ storage, engine: { run: (task) => (tasks.push(task.op), inline.run(task)), close: async () => {} } });
    const copy = await transfer.import('default', doc as unknown as StudyDocument);
    expect(copy.id).not.toBe(doc.study.id);
    expect(tasks).toEqual(['ask', 'estimate']);
  });

  it('storage: a failing import leaves nothing behind (one transaction)', async () => {
    const doc = await exportDoc(await studyWithHistory('random'));
    const record = (await storage.exportStudy('default', doc.study.id as string))!;
    const dup = { ...record.engineStates[0]!, revision: 99 };
    await expect(storage.importStudy({ ...record.study, id: 'half' }, record.trials, [...record.engineStates, dup], [], importedEvaluations(record.study, record.trials))).rejects.toThrow();
    expect(await storage.getStudy('default', 'half')).toBeNull();
    expect(await storage.listAllTrials('half')).toEqual([]);
  });

  it('413 above the import body limit; 415 for a non-JSON body', async () => {
    expect((await app.inject({ method: 'POST', url: '/v1/studies/import', payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).statusCode).toBe(415);
    const big = JSON.stringify({ format: 'probnes-study', pad: 'x'.repeat(33 * 1024 * 1024) });
    expect((await importDoc(big)).statusCode).toBe(413);
  });
});
