/**
 * Work bounded by the request before it is done: an import whose arrays are longer than their
 * declared limits is refused without reading an element; one within the limits is read only until
 * MAX_ERRORS issues are known; and no answer lists more than MAX_ERRORS field errors, on any route.
 * The counts of elements read come from the validator's meter (src/domain/transfer/document-parse.ts);
 * how long these requests take and what they cost in memory is bench/hostile-import.ts's to measure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_LIMITS, MAX_ERRORS, parseDocument, type ParseMeter } from '../../src/domain/index.js';
import { fixture, jsonRequest, type Fixture } from './harness.js';

let f: Fixture;
let doc: Record<string, unknown> & { trials: Record<string, unknown>[]; engine_states: unknown[] };
beforeAll(async () => {
  f = await fixture();
  doc = (await f.app.inject({ method: 'GET', url: `/v1/studies/${f.a}/export` })).json();
});
afterAll(async () => {
  await f.close();
});

/** The document's elements the validator reads for this body. */
function elementsRead(body: unknown): number {
  const meter: ParseMeter = { elements: 0 };
  parseDocument(body, meter);
  return meter.elements;
}

async function importing(body: unknown) {
  const res = await f.app.inject(jsonRequest('POST', '/v1/studies/import', body));
  const problem = res.json() as { code: string; errors?: { path: string; message: string }[] };
  return { status: res.statusCode, problem };
}

describe('POST /v1/studies/import with hostile array sizes', () => {
  it('engine_states of 10⁶ empty objects: refused by the declared limit, no element read', async () => {
    const body = { ...doc, engine_states: Array.from({ length: 1_000_000 }, () => ({})) };
    const { status, problem } = await importing(body);
    expect(status).toBe(400);
    expect(problem.errors).toEqual([{ path: '/engine_states', message: expect.stringContaining(`at most ${DOCUMENT_LIMITS.engineStates} items`) }]);
    expect(elementsRead(body)).toBe(0);
  });

  it('engine_states of 5·10⁴ empty objects (within the limit): at most MAX_ERRORS errors, from the first few elements', async () => {
    const body = { ...doc, engine_states: Array.from({ length: 50_000 }, () => ({})) };
    const { status, problem } = await importing(body);
    expect(status).toBe(400);
    expect(problem.errors!.length).toBe(MAX_ERRORS);
    expect(problem.errors!.every((e) => /^\/engine_states\/[0-9]\//.test(e.path))).toBe(true);
    // Every empty object misses five required fields: the 20 errors come from the first 4.
    expect(elementsRead(body)).toBeLessThanOrEqual(MAX_ERRORS);
  });

  it('"trials": [0]×10⁶: refused by the declared limit, no element read', async () => {
    const body = { ...doc, trials: new Array<number>(1_000_000).fill(0) };
    const { status, problem } = await importing(body);
    expect(status).toBe(400);
    expect(problem.errors).toEqual([{ path: '/trials', message: expect.stringContaining(`at most ${DOCUMENT_LIMITS.trials} items`) }]);
    expect(elementsRead(body)).toBe(0);
  });

  it('trials at exactly the limit, every one wrong: MAX_ERRORS errors from the first MAX_ERRORS elements', async () => {
    const body = { ...doc, trials: new Array<number>(DOCUMENT_LIMITS.trials).fill(0) };
    const { status, problem } = await importing(body);
    expect(status).toBe(400);
    expect(problem.errors!.map((e) => e.path)).toEqual(Array.from({ length: MAX_ERRORS }, (_, i) => `/trials/${i}`));
    expect(elementsRead(body)).toBe(MAX_ERRORS);
  });

  it('a trial whose parameters hold 10⁵ wrong values: one error, counted before any value is read', async () => {
    const parameters = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`p${i}`, [i]]));
    const body = { ...doc, trials: [{ ...doc.trials[0], parameters }, ...doc.trials.slice(1)] };
    const { status, problem } = await importing(body);
    expect(status).toBe(400);
    expect(problem.errors).toEqual([{ path: '/trials/0/parameters', message: 'must have at most 100 keys' }]);
  });

  it('consistency checks stop at MAX_ERRORS too (10⁴ well-formed trials, each after the study\'s generation)', async () => {
    const t = doc.trials[0]!;
    const trials = Array.from({ length: 10_000 }, (_, i) => ({ ...t, trial_id: i + 1, generation: 1_000_000 }));
    const { status, problem } = await importing({ ...doc, trials });
    expect(status).toBe(400);
    expect(problem.errors!.length).toBe(MAX_ERRORS);
    expect(problem.errors!.every((e) => /^\/trials\/\d+\/generation$/.test(e.path))).toBe(true);
  });

  it('the unchanged export still imports', async () => {
    const { status } = await importing(doc);
    expect(status).toBe(201);
  });
});

describe('other routes taking arrays and records', () => {
  it('POST /v1/studies with 5·10⁴ wrong options (within the 1 MiB body limit): one error, the key count', async () => {
    const options = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`o${i}`, [i]]));
    const res = await f.app.inject(jsonRequest('POST', '/v1/studies', { name: 'x', parameters: [{ name: 'x', bounds: [0, 1] }], options }));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: '/options', message: 'must have at most 64 keys' }]);
  });

  it('POST /v1/studies with prior.from_points of 10⁴ points of 5 wrong values each: at most MAX_ERRORS errors listed', async () => {
    const point = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`p${i}`, 'x']));
    const res = await f.app.inject(jsonRequest('POST', '/v1/studies', { name: 'x', parameters: [{ name: 'x', bounds: [0, 1] }], prior: { from_points: new Array(10_000).fill(point) } }));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.length).toBe(MAX_ERRORS);
    expect(res.json().detail).toContain(`the first ${MAX_ERRORS} are listed`);
  });

  it('POST /v1/studies with a from_points point of 10⁴ keys: one error, the key count', async () => {
    const point = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, 'x']));
    const res = await f.app.inject(jsonRequest('POST', '/v1/studies', { name: 'x', parameters: [{ name: 'x', bounds: [0, 1] }], prior: { from_points: [point, point] } }));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['/prior/from_points/0', '/prior/from_points/1']);
  });

  it('POST …/observations with one point of 2·10⁴ wrong values: one error, the key count, before any value is read', async () => {
    const parameters = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, [i]]));
    const res = await f.app.inject(jsonRequest('POST', `/v1/studies/${f.a}/observations`, { observations: [{ trial_id: 1, value: 0 }, { parameters, value: 1 }] }));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: '/observations/1/parameters', message: 'must have at most 100 keys' }]);
  });

  it('POST …/observations with 1000 wrong observations: at most MAX_ERRORS errors listed', async () => {
    const res = await f.app.inject(jsonRequest('POST', `/v1/studies/${f.a}/observations`, { observations: new Array(1000).fill({ trial_id: 'one', value: 'x' }) }));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.length).toBe(MAX_ERRORS);
  });
});
