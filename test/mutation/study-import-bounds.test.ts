/**
 * The consistency checks of an imported document (src/domain/transfer/study-import.ts checkDocument),
 * two properties no test held them to under mutation testing:
 *
 * - the resumability check asks the engine for a whole generation (the study's batch_size points),
 *   as the loop's first suggestion will: one point is only the mean for the ProbNES methods and
 *   leaves the batch selection untried;
 * - every check stops reading the document once MAX_ERRORS (20) problems are found, so a document of
 *   10⁵ bad trials, values, snapshots or numbers costs about what one of 20 does. The work is counted
 *   by reading the document through proxies that record which of its items were read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { checkDocument } from '../../src/domain/transfer/study-import.js';
import type { StudyDocument } from '../../src/domain/transfer/study-document.js';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { ValidationError } from '../../src/domain/common/errors.js';
import { MAX_ERRORS } from '../../src/domain/common/schemas.js';
import { makeTestApp } from '../helpers/app.js';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await makeTestApp());
});
afterAll(async () => {
  await app.close();
});

/** A study run for `generations` generations, exported. */
async function exported(body: Record<string, unknown>, generations: number): Promise<StudyDocument> {
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'doc', seed: 5, parameters: [{ name: 'x', bounds: [-1, 1] }, { name: 'y', bounds: [-1, 1] }], ...body } });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  for (let g = 0; g < generations; g++) {
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${body.batch_size as number}` })).json().trials as { trial_id: number; parameters: { x: number; y: number } }[];
    const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: trials.map((t) => ({ trial_id: t.trial_id, value: t.parameters.x ** 2 + t.parameters.y ** 2 }) ) } });
    expect(res.statusCode, res.body).toBe(200);
  }
  return (await app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json() as StudyDocument;
}

/** `n` objects made from `make(i)`, each behind a proxy that adds its index to `read` when `key` is read. */
function watched<T extends object>(n: number, make: (i: number) => T, key: string, read: Set<number>): T[] {
  return Array.from({ length: n }, (_, i) => new Proxy(make(i), { get: (t, k, r) => (k === key && read.add(i), Reflect.get(t, k, r)) }));
}

async function problems(doc: StudyDocument): Promise<{ path: string }[]> {
  const err = await checkDocument(doc).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  return (err as ValidationError).errors;
}

describe('the resumability check of an import', () => {
  it('asks the engine for the study\'s batch_size points, from the document\'s history, and for an estimate', async () => {
    const doc = await exported({ method: 'prob-cmaes', batch_size: 3 }, 1);
    const tasks: EngineTask[] = [];
    const inline = new InlineEngineRunner();
    const recorder: EngineRunner = { run: (task) => (tasks.push(task), inline.run(task)), close: () => inline.close() };
    await checkDocument(doc, recorder);
    const ask = tasks.find((t) => t.op === 'ask');
    expect(ask).toMatchObject({ op: 'ask', method: 'prob-cmaes', count: 3, ctx: { pending: [] } });
    expect((ask as { ctx: { history: unknown[] } }).ctx.history).toHaveLength(3);
    expect(tasks.some((t) => t.op === 'estimate')).toBe(true);
  });
});

describe('the checks stop at MAX_ERRORS problems', () => {
  let doc: StudyDocument;
  beforeAll(async () => {
    doc = await exported({ method: 'random', batch_size: 2 }, 1);
  });
  const N = 10_000;

  it('trials: each after the study\'s generation; at most MAX_ERRORS of 10 000 are read', async () => {
    const read = new Set<number>();
    const template = doc.trials[0]!;
    const trials = watched(N, (i) => ({ ...structuredClone(template), trial_id: 1000 + i, generation: 99 }), 'parameters', read);
    const errors = await problems({ ...doc, trials, intermediate_values: [] });
    expect(errors).toHaveLength(MAX_ERRORS);
    expect(read.size).toBeLessThanOrEqual(MAX_ERRORS);
  });

  it('intermediate values: each of a trial not in the document; at most MAX_ERRORS of 10 000 are read', async () => {
    const read = new Set<number>();
    const values = watched(N, (i) => ({ trial_id: 10_000 + i, step: 0, value: 1, created_at: doc.study.created_at }), 'step', read);
    const errors = await problems({ ...doc, intermediate_values: values });
    expect(errors).toHaveLength(MAX_ERRORS);
    expect(read.size).toBeLessThanOrEqual(MAX_ERRORS);
  });

  it('engine states: each a duplicate generation and revision; at most MAX_ERRORS of 10 000 are read, in either pass', async () => {
    const states = new Set<number>(), revisions = new Set<number>();
    const template = doc.engine_states[doc.engine_states.length - 1]!;
    const copies = Array.from({ length: N }, () => structuredClone(template));
    const watchedStates = copies.map((e, i) => new Proxy(e, { get: (t, k, r) => ((k === 'state' ? states : k === 'revision' ? revisions : null)?.add(i), Reflect.get(t, k, r)) }));
    const errors = await problems({ ...doc, engine_states: watchedStates });
    expect(errors).toHaveLength(MAX_ERRORS);
    // Two problems per copy after the first: the first MAX_ERRORS / 2 + 1 copies are read, and not one more.
    expect(states.size).toBe(MAX_ERRORS / 2 + 1);
    expect(revisions.size).toBe(MAX_ERRORS / 2 + 1);
  });

  it('numbers of a state: 100 000 objects holding a non-finite number, at most MAX_ERRORS are looked into', async () => {
    const read = new Set<number>();
    const junk = watched(100_000, () => ({ v: Number.NaN }), 'v', read);
    const k = doc.engine_states.length - 1;
    const engine_states = doc.engine_states.map((e, i) => (i === k ? { ...e, state: { ...e.state, junk } } : e));
    const errors = await problems({ ...doc, engine_states });
    expect(errors).toHaveLength(MAX_ERRORS);
    expect(errors.every((e) => e.path.startsWith(`/engine_states/${k}/state/junk/`))).toBe(true);
    // One problem per object: the first MAX_ERRORS are looked into, and not one more.
    expect(read.size).toBe(MAX_ERRORS);
  });
});
