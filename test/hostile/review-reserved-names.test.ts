/**
 * Parameter names every JavaScript object already has (`__proto__`, `constructor`, `prototype`,
 * `toString`, …) are refused at creation and import with a 400 at the parameter's JSON pointer; a
 * `__proto__` parameter used to be accepted and then lost its values. And such a name anywhere a
 * request can carry one (the query, an observation's point, a body's keys and values), on every
 * route of the OpenAPI document, gets a success or a 4xx problem that changes nothing, never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESERVED_PARAMETER_NAMES } from '../../src/domain/studies/study-request.js';
import { fixture, hostile, jsonRequest, Raw, type Fixture } from './harness.js';

let f: Fixture;
let ops: { method: string; path: string }[];
beforeAll(async () => {
  f = await fixture();
  const doc = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => ({ method: m.toUpperCase(), path })));
});
afterAll(async () => {
  await f.close();
});

const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
/** The names the every-route sweep sends (each sweep is a few hundred requests). */
const SWEEP = ['__proto__', 'constructor', 'prototype', 'toString'];

/** A create body with the name at parameter 1, numeric or categorical. */
function createBody(name: string, categorical: boolean): Record<string, unknown> {
  const p = categorical ? { name, type: 'categorical', choices: ['a', 'b'] } : { name, bounds: [0, 1] };
  return { name: 'reserved', method: 'random', parameters: [{ name: 'ok', bounds: [0, 1] }, p] };
}

/** JSON text with `"name": …` keys written by hand: JSON.stringify of an object cannot hold a `__proto__` key. */
const key = (name: string, value: string) => new Raw(`{${JSON.stringify(name)}:${value}}`);

describe('reserved parameter names', () => {
  it('the list holds Object.prototype\'s own names and prototype', () => {
    for (const n of Object.getOwnPropertyNames(Object.prototype)) expect(RESERVED_PARAMETER_NAMES.has(n), n).toBe(true);
    expect(RESERVED_PARAMETER_NAMES.has('prototype')).toBe(true);
  });

  it('are refused at creation: 400 validation_failed at /parameters/1/name, nothing created', async () => {
    for (const name of RESERVED_PARAMETER_NAMES) {
      for (const categorical of [false, true]) {
        const req = jsonRequest('POST', '/v1/studies', createBody(name, categorical));
        const res = await hostile(f, req);
        expect(res.statusCode, `${name} categorical=${categorical}`).toBe(400);
        expect(res.json().errors, name).toEqual([expect.objectContaining({ path: '/parameters/1/name', message: expect.stringContaining('reserved') })]);
      }
    }
  });

  it('names that only resemble them are accepted', async () => {
    for (const name of ['proto', '__proto', 'Constructor', 'prototype_', 'toString2', 'value_of']) {
      const res = await hostile(f, jsonRequest('POST', '/v1/studies', createBody(name, false)));
      expect(res.statusCode, name).toBe(201);
    }
  });

  it('are refused at import, at the parameter\'s pointer in the document', async () => {
    const doc = (await f.app.inject({ method: 'GET', url: `/v1/studies/${f.a}/export` })).json() as { study: { parameters: { name: string }[] } };
    for (const name of NAMES) {
      const copy = structuredClone(doc);
      copy.study.parameters[2]!.name = name;
      const res = await hostile(f, jsonRequest('POST', '/v1/studies/import', copy));
      expect(res.statusCode, name).toBe(400);
      expect(res.json().errors, name).toContainEqual(expect.objectContaining({ path: '/study/parameters/2/name', message: expect.stringContaining('reserved') }));
    }
  });

  it('on every documented route, in the query, in a point and as a body\'s keys and values: a success or a 4xx problem, never a 5xx', async () => {
    expect(ops.length).toBeGreaterThan(0);
    let sent = 0;
    for (const name of SWEEP) {
      // Were the name accepted, the sweep would also run on a study that has it, with evaluated points.
      const studies = [f.a];
      const created = await hostile(f, jsonRequest('POST', '/v1/studies', { ...createBody(name, false), batch_size: 4 }), { keep: true });
      if (created.statusCode === 201) {
        const id = created.json().id as string;
        const trials = (await hostile(f, { method: 'GET', url: `/v1/studies/${id}/suggestions?count=4&client_id=w` })).json().trials as { trial_id: number }[];
        await hostile(f, jsonRequest('POST', `/v1/studies/${id}/observations`, { observations: trials.map((t, i) => ({ trial_id: t.trial_id, value: i })) }));
        studies.push(id);
      }
      for (const study of studies) {
        for (const op of ops) {
          // A DELETE that succeeds would leave the rest of the run without its study.
          const url = op.path.replace('{study_id}', op.method === 'DELETE' ? 'study-9999' : study).replace('{trial_id}', '1');
          const q = encodeURIComponent(name);
          for (const query of [`?x=${q}&y=ok`, `?x=ok&y=${q}`, `?x=${q}&y=lr`, `?${q}=1`, `?state=${q}&client_id=${q}`]) {
            await hostile(f, { method: op.method as 'GET', url: url + query });
            sent++;
          }
          if (op.method === 'GET' || op.method === 'DELETE') continue;
          const point = new Raw(`{"x":0,"lr":0.1,"n":2,"ok":0.5,${JSON.stringify(name)}:1}`);
          const bodies = [
            createBody(name, false),
            createBody(name, true),
            { observations: [{ parameters: point, value: 1 }] },
            { observations: [{ trial_id: 4, value: 1, parameters: point }] },
            key(name, '1'),
            key(name, '{"polluted":true}'),
            { name, reason: name, client_id: name, metadata: key(name, '1') },
          ];
          for (const body of bodies) {
            await hostile(f, jsonRequest(op.method as 'POST', url, body));
            sent++;
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(ops.length * SWEEP.length * 5);
  }, 120_000);
});
