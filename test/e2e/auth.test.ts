/**
 * The real server process and the open-mode guard: without keys it refuses a non-loopback HOST
 * (unless ALLOW_INSECURE_OPEN=true); with keys from the environment it listens anywhere and
 * demands them; `probnes serve` starts the same server; Swagger UI renders under the CSP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-e2e-auth-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});


let dbs = 0;
function start(env: Record<string, string>, argv = ['--import', 'tsx', 'src/server.ts']) {
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...process.env, LOG_PRETTY: 'false', LOG_LEVEL: 'warn', ENGINE_WORKERS: '0', DATABASE_PATH: path.join(tmp, `db-${++dbs}.db`), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function waitReady(base: string, exited: Promise<unknown>): Promise<void> {
  let done = false;
  void exited.then(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('server did not become ready');
}

async function stop(srv: ReturnType<typeof start>) {
  srv.child.kill('SIGTERM');
  expect(await srv.exited).toBe(0);
}

describe('open mode guard', () => {
  it('refuses to listen on a non-loopback address without keys, with a message that says what to do', async () => {
    const srv = start({ HOST: '0.0.0.0', PORT: String(await freePort()) });
    expect(await srv.exited).toBe(1);
    expect(srv.err()).toMatch(/refusing to listen on HOST=0\.0\.0\.0 without API keys/);
    expect(srv.err()).toMatch(/ALLOW_INSECURE_OPEN=true/);
  }, 30_000);

  it('starts open on a non-loopback address with ALLOW_INSECURE_OPEN=true', async () => {
    const port = await freePort();
    const srv = start({ HOST: '0.0.0.0', PORT: String(port), ALLOW_INSECURE_OPEN: 'true' });
    await waitReady(`http://127.0.0.1:${port}`, srv.exited);
    expect((await fetch(`http://127.0.0.1:${port}/v1/studies`)).status).toBe(200);
    expect(srv.out()).toMatch(/running open/);
    await stop(srv);
  }, 30_000);

  it('with API_KEYS listens anywhere, demands a key, and never logs it', async () => {
    const port = await freePort();
    const key = 'k'.repeat(24) + 'SECRETSECRET';
    const srv = start({ HOST: '0.0.0.0', PORT: String(port), API_KEYS: `acme:${key}`, LOG_LEVEL: 'debug' });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, srv.exited);
    const anon = await fetch(`${base}/v1/studies`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = { name: 'e2e', parameters: [{ name: 'x', bounds: [-1, 1] }], method: 'random', batch_size: 1 };
    const created = await fetch(`${base}/v1/studies`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    expect(created.status).toBe(201);
    await stop(srv);
    expect(srv.out() + srv.err()).not.toContain('SECRETSECRET');
  }, 30_000);

  it('names API_KEYS in the error for a malformed value without echoing it', async () => {
    const srv = start({ API_KEYS: 'acme:tooshortSECRET' });
    expect(await srv.exited).toBe(1);
    expect(srv.err()).toMatch(/API_KEYS: .*entry 1 \(tenant acme\).*at least 32/);
    expect(srv.err()).not.toContain('tooshortSECRET');
  }, 30_000);

  it('`probnes serve` runs the same server', async () => {
    const port = await freePort();
    const srv = start({ PORT: String(port) }, ['bin/probnes.js', 'serve']);
    await waitReady(`http://127.0.0.1:${port}`, srv.exited);
    await stop(srv);
  }, 30_000);
});
