/**
 * A key sent in the query (`?access_token=…`, unsupported) was written to the log with the URL.
 * The request lines of a real pino logger, captured: no value of a credential-looking query
 * parameter appears in any of them, on any kind of answer (200, 401, 404, 400, a malformed URL),
 * and the rest of the URL is still there to read.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { REDACTED, redactUrl } from '../../src/http/logging.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';

const SECRET = 'pnk_SECRETVALUE0123456789';
const lines: string[] = [];
let app: FastifyInstance;
let storage: Storage;

beforeAll(async () => {
  storage = SqliteStorage.open(':memory:');
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000 }, storage, logger: pino({ level: 'trace' }, sink) });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await storage.close();
});

/** Credential-looking parameters as clients send them (names in any case, encoded, with suffixes). */
const NAMES = ['access_token', 'api_key', 'apikey', 'apiKey', 'API_KEY', 'key', 'token', 'auth_token', 'password', 'passwd', 'pwd', 'secret', 'client_secret', 'x-api-key', 'authorization', 'session', 'sig', 'access%5Ftoken', 'access_token[]'];

describe('request log lines', () => {
  it('never hold the value of a credential-looking query parameter, whatever the answer', async () => {
    const paths = ['/v1/studies', '/v1/studies/study-0001', '/healthz', '/no-such-route', '/v1/studies/%E0%A4%A/x'];
    for (const name of NAMES) {
      for (const p of paths) {
        lines.length = 0;
        const url = `${p}?page_size=7&${name}=${SECRET}&client_id=w1`;
        const res = await app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBeLessThan(500);
        const requestLines = lines.filter((l) => l.includes('"req"'));
        expect(requestLines.length, url).toBeGreaterThan(0);
        expect(lines.join('\n'), url).not.toContain(SECRET);
        // What is not a credential is still logged.
        for (const l of requestLines) expect(JSON.parse(l).req.url, url).toBe(`${p}?page_size=7&${name}=${REDACTED}&client_id=w1`);
      }
    }
  });

  it('hides a key hidden in another parameter\'s value, and keeps the API\'s own page_token', async () => {
    for (const [url, logged] of [
      [`/v1/studies?x=1;access_token=${SECRET}`, `/v1/studies?x=${REDACTED}`],
      [`/v1/studies?x=1%3Bapi_key%3D${SECRET}`, `/v1/studies?x=${REDACTED}`],
      [`/v1/studies?x=1?token=${SECRET}`, `/v1/studies?x=${REDACTED}`],
      ['/v1/studies?page_token=abc.def&page_size=2', '/v1/studies?page_token=abc.def&page_size=2'],
    ] as const) {
      lines.length = 0;
      await app.inject({ method: 'GET', url });
      expect(lines.join('\n'), url).not.toContain(SECRET);
      const requestLines = lines.filter((l) => l.includes('"req"'));
      expect(requestLines.length, url).toBeGreaterThan(0);
      for (const l of requestLines) expect(JSON.parse(l).req.url, url).toBe(logged);
    }
  });

  it('redactUrl leaves URLs without credentials as they are, and finds one after a fragment mark', () => {
    // A fragment is not sent by HTTP clients (light-my-request drops it), but a raw request target may hold one.
    expect(redactUrl(`/v1/studies?x=1#password=${SECRET}`)).toBe(`/v1/studies?x=${REDACTED}`);
    for (const url of ['/v1/studies', '/v1/studies?', '/v1/studies?page_size=3', '/v1/studies/s/model/grid?x=lr&y=x&n=20', '/a?b', '/a?=1', '/a?%ZZ=1']) expect(redactUrl(url)).toBe(url);
  });
});
