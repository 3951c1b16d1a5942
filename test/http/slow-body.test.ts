/**
 * REQUEST_TIMEOUT_MS bounds the receipt of the whole request: a real server listening on loopback,
 * a client that sends its headers at once and then its body one byte at a time, each byte well
 * within the idle timeout. The server must answer 408 and close the connection once the bound has
 * passed, long before the body would have been complete, with a key or without (the cut happens
 * before any route runs). The bound here is 1 s so that the test is quick.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hashApiKey } from '../../src/domain/auth/api-keys.js';
import { SqliteStorage } from '../../src/storage/index.js';

const BOUND_MS = 1000;
const KEY = 'k'.repeat(40);

const apps: FastifyInstance[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

async function listening(keyed: boolean): Promise<number> {
  const storage = SqliteStorage.open(':memory:');
  if (keyed) await storage.ensureTenant('acme', new Date().toISOString());
  const app = await buildApp({
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: BOUND_MS },
    storage,
    auth: keyed ? { envKeys: [{ tenantId: 'acme', keyHash: hashApiKey(KEY) }], allowOpen: false } : { allowOpen: true },
  });
  app.addHook('onClose', async () => storage.close());
  apps.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as net.AddressInfo).port;
}

/**
 * Sends the request line and headers, then one body byte every `everyMs`; resolves with the first
 * line of the answer and when the connection closed (milliseconds after the headers were sent).
 */
function trickle(port: number, body: string, everyMs: number, headers: Record<string, string> = {}): Promise<{ status: string; closedAfterMs: number; bytesSent: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const start = performance.now();
    socket.on('connect', () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`POST /v1/studies HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`);
      timer = setInterval(() => {
        if (sent < body.length && !socket.destroyed) socket.write(body[sent++]!);
      }, everyMs);
    });
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the 408 is part of being cut off
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ status: answer.split('\r\n')[0] ?? '', closedAfterMs: performance.now() - start, bytesSent: sent });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error('the connection was still open after 20 s'));
    }, 20_000).unref();
  });
}

describe('a trickled body is cut off at REQUEST_TIMEOUT_MS', () => {
  // 200 bytes at one per 100 ms would take 20 s to arrive.
  const body = JSON.stringify({ name: 'slow', parameters: [{ name: 'x', bounds: [0, 1] }] }).padEnd(200, ' ');

  for (const keyed of [false, true]) {
    it(`${keyed ? 'with' : 'without'} a key: 408 and the connection closed, the body far from complete`, async () => {
      const port = await listening(keyed);
      const got = await trickle(port, body, 100, keyed ? { authorization: `Bearer ${KEY}` } : {});
      expect(got.status).toBe('HTTP/1.1 408 Request Timeout');
      expect(got.closedAfterMs).toBeGreaterThanOrEqual(BOUND_MS * 0.9);
      // Node looks for expired requests ten times per bound; 10 s leaves room for a loaded machine
      // and is still half the time the body needed (before, the cut came after 60 s).
      expect(got.closedAfterMs).toBeLessThan(10_000);
      expect(got.bytesSent).toBeLessThan(body.length);
    }, 25_000);
  }

  it('a request sent at once on the same server is unaffected', async () => {
    const port = await listening(false);
    const res = await fetch(`http://127.0.0.1:${port}/v1/studies`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(201);
  });
});
