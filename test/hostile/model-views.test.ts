/**
 * Hostile input on the model views: hostile study ids, and query strings with x, y, n, fixed, objective and
 * generation missing, not numbers, huge, negative, repeated, or next to unknown parameters, on a
 * prob-cmaes study with a few generations of observations (its own GP) and on a fresh one (no model).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { RAW_SEGMENTS, extraKey, hostileId, hostileQueryValue, numberAsString } from './arbitraries.js';
import { enc, fixture, hostile, jsonRequest, route, runs, studyA, type Fixture } from './harness.js';

const RUNS = runs(20);
const KNOWN = ['x', 'y', 'n', 'generation', 'fixed', 'objective'];

let f: Fixture;
/** prob-cmaes, three generations of four observations: generations 0–3 exist, the latest has the method's GP. */
let fitted: string;
/** prob-cmaes, nothing observed: no model to show. */
let fresh: string;
/** The grid's documented maximum n, read from the OpenAPI document. */
let maxN: number;

beforeAll(async () => {
  f = await fixture();
  const create = async () => {
    const res = await f.app.inject(jsonRequest('POST', '/v1/studies', { ...studyA, name: 'hostile-model', method: 'prob-cmaes', batch_size: 4, options: { candidates: 64 } }));
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  };
  fitted = await create();
  fresh = await create();
  for (let g = 0; g < 3; g++) {
    const s = await f.app.inject({ method: 'GET', url: `/v1/studies/${fitted}/suggestions?count=4&client_id=w` });
    expect(s.statusCode).toBe(200);
    const trials = s.json().trials as { trial_id: number; parameters: { x: number; lr: number } }[];
    const obs = await f.app.inject(jsonRequest('POST', `/v1/studies/${fitted}/observations`, { observations: trials.map((t) => ({ trial_id: t.trial_id, value: (t.parameters.x - 1) ** 2 + Math.log(t.parameters.lr) ** 2 / 10 })) }));
    expect(obs.statusCode).toBe(200);
  }
  const doc = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, { get: { parameters: { name: string; in: string; schema: { maximum?: number } }[] } }> };
  maxN = doc.paths['/v1/studies/{study_id}/model/grid']!.get.parameters.find((p) => p.in === 'query' && p.name === 'n')!.schema.maximum!;
  expect(maxN).toBe(60); // "n ≤ 60" in the route's description and docs/dashboard.md
}, 120_000);
afterAll(async () => {
  await f.close();
});

type Pair = [string, string];
const qs = (pairs: Pair[]) => pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
const pointer = (k: string) => '/' + k.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The contract on one answer to a query: validation errors name only parameters that were sent or
 * are required (never a pointer into nowhere); a query with an unknown or repeated parameter, or an
 * n above the documented maximum, is refused.
 */
function expectNamed(res: LightMyRequestResponse, pairs: Pair[], known: string[]): void {
  const where = `${qs(pairs)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  const count = new Map<string, number>();
  for (const [k] of pairs) count.set(k, (count.get(k) ?? 0) + 1);
  const unknown = [...count.keys()].filter((k) => !known.includes(k));
  const repeated = [...count.entries()].filter(([, c]) => c > 1).map(([k]) => k);
  const nValues = pairs.filter(([k]) => k === 'n').map(([, v]) => Number(v));
  const nTooBig = known.includes('n') && nValues.length === 1 && nValues[0]! > maxN;
  if (unknown.length > 0 || repeated.length > 0 || nTooBig) expect(res.statusCode, where).toBe(400);
  if (res.statusCode === 400) {
    const p = res.json() as { code: string; errors?: { path: string }[] };
    expect(p.code, where).toBe('validation_failed');
    const paths = p.errors!.map((e) => e.path);
    const allowed = new Set([...known, ...count.keys()].map(pointer));
    // `fixed` names a problem inside it at /fixed/<name>.
    for (const path of paths) expect(allowed.has(path) || (count.has('fixed') && path.startsWith('/fixed/')), where).toBe(true);
    for (const k of [...unknown, ...repeated]) expect(paths, where).toContain(pointer(k));
    if (nTooBig && unknown.length === 0 && repeated.length === 0) expect(paths, where).toContain('/n');
  }
}

/** Names for x and y: the study's parameters (numeric, log-scaled, integer), near misses, and hostile text. */
const axis = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('x', 'lr', 'n') }, { weight: 1, arbitrary: fc.constantFrom('X', 'x ', 'y', '', 'missing') }, { weight: 1, arbitrary: hostileQueryValue });
/** n: in range, the limits and just past them, negative, fractional, huge, not numbers. */
const nValue = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 2, max: 60 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('1', '0', '-1', '-0', '2.5', '61', '100', '1e3', '1e308', '1e999', '9007199254740993', 'NaN', 'Infinity') },
  { weight: 1, arbitrary: hostileQueryValue },
);
/** generation: existing (0–3), the next one, negative, fractional, huge, not numbers. */
const generationValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('0', '1', '2', '3') },
  { weight: 2, arbitrary: fc.constantFrom('4', '99', '-1', '1.5', '2147483648', '9007199254740991', '9007199254740993', '1e308') },
  { weight: 1, arbitrary: numberAsString },
  { weight: 1, arbitrary: hostileQueryValue },
);

/**
 * fixed: JSON objects naming the study's (numeric) parameters, prototype names and other keys with
 * any JSON values, other JSON, and hostile text (the study has no categorical parameter: only {} is valid).
 */
const fixedValue = fc.oneof(
  { weight: 2, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom('x', 'lr', 'n', 'opt'), extraKey), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.constantFrom('{}', '{"x": 1}', '{"__proto__": "a"}', '{"constructor": {"prototype": 1}}', '[', '{"a":' + '['.repeat(4000) + ']'.repeat(4000) + '}') },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: hostileQueryValue },
);

/** objective: the study's one (`value`), near misses and prototype names, and hostile text. */
const objectiveValue = fc.oneof(
  { weight: 2, arbitrary: fc.constant('value') },
  { weight: 1, arbitrary: fc.constantFrom('Value', 'value ', '', 'loss', '__proto__', 'constructor', 'toString') },
  { weight: 1, arbitrary: hostileQueryValue },
);

/** Usually nothing, else one or two of `a`. */
const sometimes = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant<T[]>([]) }, { weight: 1, arbitrary: fc.array(a, { minLength: 1, maxLength: 2 }) });

/** A query: each known parameter present or missing, then unknown keys and repeats of known ones. */
function query(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<Pair[]> {
  const names = Object.keys(fields);
  const value = fc.oneof(...Object.values(fields));
  return fc
    .tuple(
      // Mostly present and mostly without extras, so that a good share of queries is valid and reaches the model.
      fc.record(Object.fromEntries(names.map((k) => [k, fc.option(fields[k]!, { nil: undefined, freq: 6 })])) as Record<string, fc.Arbitrary<string | undefined>>),
      sometimes(fc.tuple(extraKey.map((k) => k || 'k'), hostileQueryValue)),
      sometimes(fc.tuple(fc.constantFrom(...names), value)),
    )
    .map(([known, extra, repeats]) => [...Object.entries(known).filter((e): e is Pair => e[1] !== undefined), ...extra, ...repeats]);
}

/**
 * A valid query with at most one fault (a parameter dropped, its value replaced by a hostile one,
 * an unknown parameter added, or a parameter repeated): each refusal then has a single cause to name.
 */
function oneFault(valid: fc.Arbitrary<Pair[]>, bad: fc.Arbitrary<string>): fc.Arbitrary<Pair[]> {
  return fc.tuple(valid, fc.nat(), fc.constantFrom('none', 'drop', 'replace', 'unknown', 'repeat'), bad, extraKey).map(([pairs, i, op, v, k]) => {
    const out = [...pairs];
    const j = i % Math.max(1, out.length);
    if (op === 'unknown') out.push([k || 'k', v]);
    else if (out.length > 0 && op === 'drop') out.splice(j, 1);
    else if (out.length > 0 && op === 'replace') out[j] = [out[j]![0], v];
    else if (out.length > 0 && op === 'repeat') out.push([out[j]![0], v]);
    return out;
  });
}
const someGeneration = fc.option(fc.constantFrom('0', '1', '2', '3'), { nil: undefined });
const validGrid = fc
  .tuple(fc.constantFrom(['x', 'lr'], ['lr', 'x'], ['x', 'n'], ['n', 'lr']), fc.option(fc.integer({ min: 2, max: 60 }).map(String), { nil: undefined }), someGeneration)
  .map(([[x, y], n, g]) => [['x', x], ['y', y], ...(n === undefined ? [] : [['n', n]]), ...(g === undefined ? [] : [['generation', g]])] as Pair[]);
const gridQuery = fc.oneof(query({ x: axis, y: axis, n: nValue, generation: generationValue }), query({ x: axis, y: axis, fixed: fixedValue }), query({ x: axis, y: axis, objective: objectiveValue }), oneFault(validGrid, fc.oneof(axis, nValue, generationValue)));
const importanceQuery = fc.oneof(query({ generation: generationValue }), query({ objective: objectiveValue }), oneFault(someGeneration.map((g) => (g === undefined ? [] : [['generation', g]]) as Pair[]), generationValue));

describe(route('GET /v1/studies/{study_id}/model/grid'), () => {
  const url = (id: string, pairs: Pair[]) => `/v1/studies/${id}/model/grid?${qs(pairs)}`;

  it('hostile study ids, and raw segments that are not valid URL text', async () => {
    await fc.assert(
      fc.asyncProperty(hostileId, async (id) => {
        const res = await hostile(f, { method: 'GET', url: url(enc(id), [['x', 'x'], ['y', 'lr']]) }, { snap: false });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
      }),
      RUNS,
    );
    for (const raw of RAW_SEGMENTS) expect((await hostile(f, { method: 'GET', url: `/v1/studies/${raw}/model/grid?x=x&y=lr` }, { snap: false })).statusCode).toBeGreaterThanOrEqual(400);
  });

  it('hostile query strings on a study with a model: every answer < 500, refusals name the parameter, a success has n×n predictions', async () => {
    await fc.assert(
      fc.asyncProperty(gridQuery, async (pairs) => {
        const res = await hostile(f, { method: 'GET', url: url(fitted, pairs) }, { snap: false });
        expectNamed(res, pairs, KNOWN);
        if (res.statusCode === 200) {
          const n = Number(pairs.find(([k]) => k === 'n')?.[1] ?? 30);
          const g = res.json() as { mean: number[][]; std: number[][] };
          expect(g.mean).toHaveLength(n);
          expect(g.std.every((row) => row.length === n)).toBe(true);
        }
      }),
      runs(30),
    );
  }, 120_000);

  it('hostile query strings on a fresh study: < 500, and a valid query is a 409 (no model yet)', async () => {
    await fc.assert(
      fc.asyncProperty(gridQuery, async (pairs) => {
        const res = await hostile(f, { method: 'GET', url: url(fresh, pairs) }, { snap: false });
        expectNamed(res, pairs, KNOWN);
        expect(res.statusCode).not.toBe(200);
      }),
      RUNS,
    );
    expect((await hostile(f, { method: 'GET', url: url(fresh, [['x', 'x'], ['y', 'lr']]) })).json().code).toBe('model_unavailable');
  });

  it('n above the documented maximum is refused naming n; the maximum itself is served', async () => {
    for (const n of [maxN + 1, maxN * 10, 2 ** 31, 2 ** 53]) {
      const res = await hostile(f, { method: 'GET', url: url(fitted, [['x', 'x'], ['y', 'lr'], ['n', String(n)]]) });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain('/n');
    }
    const max = await hostile(f, { method: 'GET', url: url(fitted, [['x', 'x'], ['y', 'lr'], ['n', String(maxN)]]) });
    expect(max.statusCode).toBe(200);
    expect(max.json().mean).toHaveLength(maxN);
  }, 60_000);

  it('missing axes, x = y, and a generation or objective the study does not have are 400s naming the parameter', async () => {
    const cases: [Pair[], string][] = [
      [[['y', 'lr']], '/x'],
      [[['x', 'x']], '/y'],
      [[['x', 'x'], ['y', 'x']], '/y'],
      [[['x', 'x'], ['y', 'lr'], ['generation', '4']], '/generation'],
      [[['x', 'x'], ['y', 'lr'], ['generation', '-1']], '/generation'],
      [[['x', 'x'], ['y', 'lr'], ['x', 'lr']], '/x'],
      [[['x', 'x'], ['y', 'lr'], ['objective', '__proto__']], '/objective'],
      [[['x', 'x'], ['y', 'lr'], ['objective', '']], '/objective'],
    ];
    for (const [pairs, path] of cases) {
      const res = await hostile(f, { method: 'GET', url: url(fitted, pairs) });
      expect(res.statusCode, qs(pairs)).toBe(400);
      expect(res.json().errors.map((e: { path: string }) => e.path), qs(pairs)).toContain(path);
    }
  });
});

describe(route('GET /v1/studies/{study_id}/model/importance'), () => {
  const url = (id: string, pairs: Pair[]) => `/v1/studies/${id}/model/importance?${qs(pairs)}`;

  it('hostile study ids, and raw segments that are not valid URL text', async () => {
    await fc.assert(
      fc.asyncProperty(hostileId, async (id) => {
        const res = await hostile(f, { method: 'GET', url: url(enc(id), []) }, { snap: false });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
      }),
      RUNS,
    );
    for (const raw of RAW_SEGMENTS) expect((await hostile(f, { method: 'GET', url: `/v1/studies/${raw}/model/importance` }, { snap: false })).statusCode).toBeGreaterThanOrEqual(400);
  });

  it('hostile query strings on a study with a model and on a fresh one: < 500, refusals name the parameter', async () => {
    await fc.assert(
      fc.asyncProperty(importanceQuery, fc.boolean(), async (pairs, onFresh) => {
        const res = await hostile(f, { method: 'GET', url: url(onFresh ? fresh : fitted, pairs) }, { snap: false });
        expectNamed(res, pairs, ['generation', 'objective']);
        if (onFresh) expect(res.statusCode).not.toBe(200);
        if (res.statusCode === 200) expect((res.json() as { parameters: unknown[] }).parameters).toHaveLength(3);
      }),
      runs(30),
    );
    expect((await hostile(f, { method: 'GET', url: url(fitted, [['generation', '4']]) })).statusCode).toBe(400);
    expect((await hostile(f, { method: 'GET', url: url(fresh, []) })).json().code).toBe('model_unavailable');
  }, 120_000);
});
