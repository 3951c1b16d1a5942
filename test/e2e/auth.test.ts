/**
 * The real server process and the open-mode guard: without keys it refuses a non-loopback HOST
 * (unless ALLOW_INSECURE_OPEN=true); with keys from the environment it listens anywhere and
 * demands them; `probnes serve` starts the same server; Swagger UI renders under the CSP.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { E2E_TIMEOUT_MS, spawnServer, waitReady, type SpawnedServer } from '../helpers/server-process.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-e2e-auth-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});


let dbs = 0;
function start(env: Record<string, string>, argv?: string[]): SpawnedServer {
  const srv = spawnServer({ ENGINE_WORKERS: '0', DATABASE_PATH: path.join(tmp, `db-${++dbs}.db`), ...env }, argv);
  children.push(srv.child);
  return srv;
}

async function stop(srv: SpawnedServer) {
  srv.child.kill('SIGTERM');
  expect(await srv.exited).toBe(0);
}

describe('open mode guard', () => {
  it('refuses to listen on a non-loopback address without keys, with a message that says what to do', async () => {
    const srv = start({ HOST: '0.0.0.0', PORT: String(await freePort()) });
    expect(await srv.exited).toBe(1);
    expect(srv.err()).toMatch(/refusing to listen on HOST=0\.0\.0\.0 without API keys/);
    expect(srv.err()).toMatch(/ALLOW_INSECURE_OPEN=true/);
  }, E2E_TIMEOUT_MS);

  it('starts open on a non-loopback address with ALLOW_INSECURE_OPEN=true', async () => {
    const port = await freePort();
    const srv = start({ HOST: '0.0.0.0', PORT: String(port), ALLOW_INSECURE_OPEN: 'true' });
    await waitReady(`http://127.0.0.1:${port}`, srv.exited, { pid: srv.child.pid! });
    expect((await fetch(`http://127.0.0.1:${port}/v1/studies`)).status).toBe(200);
    expect(srv.out()).toMatch(/running open/);
    await stop(srv);
  }, E2E_TIMEOUT_MS);

  it('with API_KEYS listens anywhere, demands a key, and never logs it', async () => {
    const port = await freePort();
    const key = 'k'.repeat(24) + 'SECRETSECRET';
    const srv = start({ HOST: '0.0.0.0', PORT: String(port), API_KEYS: `acme:${key}`, LOG_LEVEL: 'debug' });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, srv.exited, { pid: srv.child.pid! });
    const anon = await fetch(`${base}/v1/studies`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = { name: 'e2e', parameters: [{ name: 'x', bounds: [-1, 1] }], method: 'random', batch_size: 1 };
    const created = await fetch(`${base}/v1/studies`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    expect(created.status).toBe(201);
    await stop(srv);
    expect(srv.out() + srv.err()).not.toContain('SECRETSECRET');
  }, E2E_TIMEOUT_MS);

  it('a database once served with API_KEYS stays keyed when the server restarts without them', async () => {
    const db = path.join(tmp, `db-${++dbs}.db`);
    const key = 'k'.repeat(40);
    const port = await freePort();
    const keyed = start({ PORT: String(port), DATABASE_PATH: db, API_KEYS: `acme:${key}` });
    await waitReady(`http://127.0.0.1:${port}`, keyed.exited, { pid: keyed.child.pid! });
    await stop(keyed);
    const again = start({ PORT: String(port), DATABASE_PATH: db });
    await waitReady(`http://127.0.0.1:${port}`, again.exited, { pid: again.child.pid! });
    expect((await fetch(`http://127.0.0.1:${port}/v1/studies`)).status).toBe(401);
    expect(again.out()).toMatch(/every key is revoked.*probnes keys open --confirm/);
    await stop(again);
  }, 2 * E2E_TIMEOUT_MS);

  it('names API_KEYS in the error for a malformed value without echoing it', async () => {
    const srv = start({ API_KEYS: 'acme:tooshortSECRET' });
    expect(await srv.exited).toBe(1);
    expect(srv.err()).toMatch(/API_KEYS: .*entry 1 \(tenant acme\).*at least 32/);
    expect(srv.err()).not.toContain('tooshortSECRET');
  }, E2E_TIMEOUT_MS);

  it('`probnes serve` runs the same server', async () => {
    const port = await freePort();
    const srv = start({ PORT: String(port) }, ['bin/probnes.js', 'serve']);
    await waitReady(`http://127.0.0.1:${port}`, srv.exited, { pid: srv.child.pid! });
    await stop(srv);
  }, E2E_TIMEOUT_MS);
});
