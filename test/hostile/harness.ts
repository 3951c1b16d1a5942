/**
 * Hostile-input harness: an in-process app with two small studies in known states, a snapshot of
 * everything a client can see (the study list and each study's export, as the exact JSON text),
 * and `hostile()`, which sends one request and checks the contract every answer must keep: a
 * success, or a 4xx application/problem+json naming the problem (JSON pointers for field errors),
 * and after a rejection the snapshot is byte-for-byte what it was before.
 *
 * The clock is fixed, so `exported_at` and every timestamp are stable between two exports and a
 * byte-for-byte comparison means "nothing changed".
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';

/**
 * fast-check options: `n` runs, times HOSTILE_RUNS_SCALE from the environment (default 1; raise it
 * locally to search longer than the suite's time budget allows).
 */
export function runs(n: number): { numRuns: number } {
  const scale = Number(process.env.HOSTILE_RUNS_SCALE ?? 1);
  return { numRuns: Math.max(1, Math.round(n * (Number.isFinite(scale) && scale > 0 ? scale : 1))) };
}

/** Names a route as the OpenAPI document does; coverage.test.ts checks every documented route is named once. */
export const route = (id: string): string => id;

export interface Fixture {
  app: FastifyInstance;
  storage: Storage;
  /** A study with COMPLETED (1, 2), FAILED (3) and ACTIVE (4) trials. */
  a: string;
  /** Another study, whose trials 1–8 exist (ids 5–8 exist only there). */
  b: string;
  close(): Promise<void>;
}

export const studyA = {
  name: 'hostile-a',
  method: 'random',
  batch_size: 2,
  seed: 1,
  parameters: [
    { name: 'x', bounds: [-5, 5] },
    { name: 'lr', scale: 'log', bounds: [1e-5, 1] },
    { name: 'n', type: 'int', bounds: [1, 10] },
  ],
  metadata: { owner: 'tests' },
};

async function ok(app: FastifyInstance, req: InjectOptions): Promise<LightMyRequestResponse> {
  const res = await app.inject(req);
  if (res.statusCode >= 300) throw new Error(`fixture request ${req.method} ${req.url} failed: ${res.statusCode} ${res.body}`);
  return res;
}

export async function fixture(): Promise<Fixture> {
  const storage = SqliteStorage.open(':memory:');
  let id = 0;
  const app = await buildApp({
    // No rate limit: a property sends thousands of requests (the snapshots included) in seconds.
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 0 },
    storage,
    logger: false,
    service: { now: () => new Date(Date.UTC(2025, 0, 1, 12)), newId: () => `study-${String(++id).padStart(4, '0')}`, newSeed: () => 12345 },
  });
  await app.ready();
  const a = (await ok(app, { method: 'POST', url: '/v1/studies', payload: studyA })).json().id as string;
  const b = (await ok(app, { method: 'POST', url: '/v1/studies', payload: { ...studyA, name: 'hostile-b', seed: 2 } })).json().id as string;
  await ok(app, { method: 'GET', url: `/v1/studies/${a}/suggestions?count=4&client_id=w1` });
  await ok(app, { method: 'POST', url: `/v1/studies/${a}/observations`, payload: { observations: [{ trial_id: 1, value: 1.5 }, { trial_id: 2, value: -0.25, stderr: 0.1 }] } });
  await ok(app, { method: 'POST', url: `/v1/studies/${a}/trials/3/fail`, payload: { reason: 'crashed' } });
  await ok(app, { method: 'GET', url: `/v1/studies/${b}/suggestions?count=8&client_id=w2` });
  return {
    app,
    storage,
    a,
    b,
    close: async () => {
      await app.close();
      await storage.close();
    },
  };
}

/** Every study the client can see, each as its export's exact text. */
export async function snapshot(app: FastifyInstance): Promise<string> {
  const list = await app.inject({ method: 'GET', url: '/v1/studies?page_size=1000' });
  expect(list.statusCode).toBe(200);
  const ids = (list.json() as { studies: { id: string }[] }).studies.map((s) => s.id);
  const parts = [list.body];
  for (const id of ids) {
    const e = await app.inject({ method: 'GET', url: `/v1/studies/${encodeURIComponent(id)}/export` });
    expect(e.statusCode).toBe(200);
    parts.push(e.body);
  }
  return parts.join('\n');
}

const POINTER = /^(\/([^~/]|~[01])*)*$/;

function show(req: InjectOptions, res: LightMyRequestResponse): string {
  const body = typeof req.payload === 'string' ? req.payload : JSON.stringify(req.payload ?? null);
  return `${req.method} ${String(req.url).slice(0, 300)} ${(body ?? '').slice(0, 300)} → ${res.statusCode} ${res.body.slice(0, 500)}`;
}

/** The shape every error answer has (docs/errors.md). */
export function expectProblem(req: InjectOptions, res: LightMyRequestResponse): void {
  const where = show(req, res);
  expect(res.headers['content-type'], where).toMatch(/^application\/problem\+json/);
  const p = res.json() as { type: string; status: number; code: string; detail: string; request_id: string; errors?: { path: string; message: string }[] };
  expect(p.status, where).toBe(res.statusCode);
  expect(p.type, where).toBe(`urn:probnes:problem:${p.code}`);
  expect(p.code, where).toMatch(/^[a-z_]+$/);
  expect(p.detail.length, where).toBeGreaterThan(0);
  expect(p.request_id, where).toBe(res.headers['x-request-id']);
  if (p.code === 'validation_failed') {
    expect(p.errors?.length, where).toBeGreaterThan(0);
    for (const e of p.errors!) {
      expect(e.path, where).toMatch(POINTER);
      expect(e.message.length, where).toBeGreaterThan(0);
    }
  }
}

/**
 * Send one request; it must succeed or be a 4xx problem, and a 4xx must change nothing.
 * `snap: false` skips the before/after comparison (for requests that cannot reach the database);
 * `keep: true` keeps a study the request created (it is deleted otherwise).
 */
export async function hostile(f: Fixture, req: InjectOptions, opts: { snap?: boolean; keep?: boolean } = {}): Promise<LightMyRequestResponse> {
  const before = opts.snap === false ? '' : await snapshot(f.app);
  const res = await f.app.inject(req);
  expect(res.statusCode, show(req, res)).toBeLessThan(500);
  if (res.statusCode >= 400) {
    expectProblem(req, res);
    if (opts.snap !== false) expect(await snapshot(f.app), `state changed by a rejected request: ${show(req, res)}`).toBe(before);
  }
  // A study that hostile input managed to create (it was valid after all) is removed again, so the
  // snapshots stay small and later runs start from the fixture.
  const location = res.headers.location;
  if (res.statusCode === 201 && typeof location === 'string' && !opts.keep) expect((await f.app.inject({ method: 'DELETE', url: location })).statusCode).toBe(204);
  return res;
}

/**
 * A path segment as a client may put it in a URL: percent-encoded, or, for strings that are not
 * well-formed UTF-16 (lone surrogates), the bytes of an invalid UTF-8 sequence.
 */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80' + encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''));
  }
}

/** JSON text as a hostile client writes it: `Raw` pieces are spliced in verbatim (NaN, 1e999, deep nesting…). */
export class Raw {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function jsonText(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${x === undefined ? 'null' : jsonText(x)}`).join(',')}}`;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v); // NaN/Infinity as a careless client sends them
  return JSON.stringify(v) ?? 'null';
}

/** A JSON request with a hand-written body. */
export function jsonRequest(method: InjectOptions['method'], url: string, body: unknown, contentType = 'application/json'): InjectOptions {
  return { method, url, payload: jsonText(body), headers: { 'content-type': contentType } };
}
