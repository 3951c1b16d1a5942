import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { makeTestApp, studyBody } from '../helpers/app.js';

describe('problem+json errors', () => {
  it('404 route_not_found for unknown routes', async () => {
    const { app } = await makeTestApp();
    const res = await app.inject({ method: 'GET', url: '/v1/nothing?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual({
      type: 'urn:probnes:problem:route_not_found',
      title: 'Not Found',
      status: 404,
      detail: 'no route for GET /v1/nothing',
      instance: '/v1/nothing',
      code: 'route_not_found',
      request_id: res.headers['x-request-id'],
    });
    await app.close();
  });

  it.each([
    ['malformed JSON', '{"name": "a",', 'application/json', 400, 'malformed_json'],
    ['empty JSON body', '', 'application/json', 400, 'malformed_json'],
    ['prototype poisoning', '{"__proto__": {"x": 1}}', 'application/json', 400, 'malformed_json'],
    ['wrong content type', 'name=a', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type'],
  ])('%s → %i %s', async (_name, payload, contentType, status, code) => {
    const { app } = await makeTestApp();
    const res = await app.inject({ method: 'POST', url: '/v1/studies', payload, headers: { 'content-type': contentType } });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ status, code, type: `urn:probnes:problem:${code}` });
    await app.close();
  });

  it('413 payload_too_large above BODY_LIMIT', async () => {
    const { app } = await makeTestApp({ bodyLimit: 2048 });
    const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ metadata: { blob: 'x'.repeat(4096) } }) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', status: 413 });
    await app.close();
  });

  it('a 500 shows nothing internal and is logged with the request id', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        cb();
      },
    });
    const { app, storage } = await makeTestApp({ logger: pino({ level: 'info' }, sink) });
    storage.getStudy = async () => {
      throw new Error('SQLITE_CORRUPT: secret internals at /var/lib/db');
    };
    const res = await app.inject({ method: 'GET', url: '/v1/studies/abc', headers: { 'x-request-id': 'req-42' } });
    expect(res.statusCode).toBe(500);
    expect(res.headers['x-request-id']).toBe('req-42');
    expect(res.json()).toEqual({
      type: 'urn:probnes:problem:internal_error',
      title: 'Internal Server Error',
      status: 500,
      detail: 'an unexpected error occurred; it has been logged with this request id',
      instance: '/v1/studies/abc',
      code: 'internal_error',
      request_id: 'req-42',
    });
    expect(res.body).not.toMatch(/SQLITE|secret|\/var\/lib/);
    const logged = lines.find((l) => l.msg === 'unhandled error');
    expect(logged).toMatchObject({ level: 50, request_id: 'req-42', err: { message: 'SQLITE_CORRUPT: secret internals at /var/lib/db' } });
    await app.close();
  });

  it('echoes a sane x-request-id and replaces an unsafe one', async () => {
    const { app } = await makeTestApp();
    expect((await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id']).toBe('abc-123');
    const replaced = (await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith spaces' } })).headers['x-request-id'];
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
    await app.close();
  });
});
