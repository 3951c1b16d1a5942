/**
 * Transport-level answers the security review found wrong: Strict-Transport-Security was sent over
 * plain HTTP (it is sent only over TLS now, and a client's X-Forwarded-Proto does not count: no
 * proxy is trusted), and /docs/static/index.html with a query string redirected to itself.
 * The TLS case runs the app's handler behind a real https server with a throwaway self-signed
 * certificate made by openssl.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { required } from '../helpers/requirements.js';

const hasOpenssl = required('openssl', spawnSync('openssl', ['version']).status === 0, 'apt-get install -y openssl');

let app: FastifyInstance;
let storage: Storage;
let plain: string;
let tls: https.Server | undefined;
let secure: string;
let dir: string;

beforeAll(async () => {
  storage = SqliteStorage.open(':memory:');
  app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000 }, storage });
  await app.listen({ port: 0, host: '127.0.0.1' });
  plain = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  if (!hasOpenssl) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-tls-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  // The app's own request handler, on a TLS socket.
  tls = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, app.routing);
  await new Promise<void>((resolve) => tls!.listen(0, '127.0.0.1', resolve));
  secure = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
});
afterAll(async () => {
  if (tls) await new Promise((resolve) => tls!.close(resolve));
  await app?.close();
  await storage?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('error', reject);
  });
}

const URLS = ['/healthz', '/v1/studies', '/docs/', '/ui/', '/no-such-route'];

describe('Strict-Transport-Security', () => {
  it('is not sent over plain HTTP, even when the client claims X-Forwarded-Proto: https', async () => {
    for (const url of URLS) {
      for (const headers of [{}, { 'x-forwarded-proto': 'https' }, { 'x-forwarded-proto': 'https', forwarded: 'proto=https' }] as Record<string, string>[]) {
        const res = await get(plain + url, headers);
        expect(res.status, url).toBeLessThan(500);
        expect(res.headers['strict-transport-security'], `${url} ${JSON.stringify(headers)}`).toBeUndefined();
        // The other security headers are still there.
        expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      }
    }
  });

  it.skipIf(!hasOpenssl)('is sent over TLS, on every answer', async () => {
    for (const url of URLS) {
      const res = await get(secure + url);
      expect(res.status, url).toBeLessThan(500);
      expect(res.headers['strict-transport-security'], url).toMatch(/^max-age=\d{7,}; includeSubDomains$/);
    }
  });
});

describe('/docs/static/index.html', () => {
  it('redirects to the docs page, never to itself, whatever the query', async () => {
    for (const q of ['', '?x', '?x=1&y', '?/static/index.html', '?a=/docs/static/index.html']) {
      const res = await app.inject({ method: 'GET', url: `/docs/static/index.html${q}` });
      expect(res.statusCode, q).toBe(302);
      const target = new URL(String(res.headers.location), `http://localhost/docs/static/index.html${q}`);
      expect(target.pathname, q).toBe('/docs/');
      const page = await app.inject({ method: 'GET', url: target.pathname + target.search });
      expect(page.statusCode, q).toBe(200);
      expect(page.headers['content-type'], q).toMatch(/^text\/html/);
    }
  });
});
