/**
 * The real server process: start it on a free port with a temporary database, drive a study over
 * HTTP, stop it with SIGTERM, and check the exit code and what is on disk.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/storage/sqlite/migrate.js';
import { freePort } from '../helpers/free-port.js';
import { E2E_TIMEOUT_MS, spawnServer, waitReady, type SpawnedServer } from '../helpers/server-process.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-e2e-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});


/** The server with info-level logs (the lifecycle test reads them), tracked for cleanup. */
function startServer(env: Record<string, string>): SpawnedServer {
  const srv = spawnServer({ LOG_LEVEL: 'info', ...env });
  children.push(srv.child);
  return srv;
}

describe('server process', () => {
  it('serves a study lifecycle, shuts down on SIGTERM with exit 0, and leaves the data on disk', async () => {
    const port = await freePort();
    const dbFile = path.join(tmp, 'sub', 'probnes.db');
    const srv = startServer({ PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: dbFile });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, srv.exited, { pid: srv.child.pid! });

    const json = { 'content-type': 'application/json' };
    const body = { name: 'e2e', parameters: [{ name: 'x', bounds: [-1, 1] }], method: 'cmaes', metadata: { run: 1 } };
    const created = await fetch(`${base}/v1/studies`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    expect(created.status).toBe(201);
    const study = (await created.json()) as { id: string };
    const second = await fetch(`${base}/v1/studies`, { method: 'POST', headers: json, body: JSON.stringify({ ...body, name: 'doomed' }) });
    const doomed = (await second.json()) as { id: string };

    const list = (await (await fetch(`${base}/v1/studies`)).json()) as { studies: { id: string }[] };
    expect(list.studies.map((s) => s.id)).toEqual([study.id, doomed.id]);

    const patched = await fetch(`${base}${created.headers.get('location')}`, { method: 'PATCH', headers: json, body: JSON.stringify({ name: 'e2e-renamed', state: 'PAUSED' }) });
    expect(patched.status).toBe(200);
    expect((await fetch(`${base}/v1/studies/${doomed.id}`, { method: 'DELETE' })).status).toBe(204);

    srv.child.kill('SIGTERM');
    expect(await srv.exited).toBe(0);
    // Structured JSON logs, one object per line, with a request id on request lines.
    const logs = srv.out().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logs.some((l) => l.msg === 'request completed' && typeof l.request_id === 'string')).toBe(true);
    expect(logs.at(-1)).toMatchObject({ msg: 'stopped', exit_code: 0 });

    const db = new Database(dbFile, { readonly: true });
    try {
      expect(db.prepare('SELECT id, name, state FROM studies').all()).toEqual([{ id: study.id, name: 'e2e-renamed', state: 'PAUSED' }]);
      expect(db.pragma('user_version', { simple: true })).toBe(loadMigrations().length);
    } finally {
      db.close();
    }
  }, E2E_TIMEOUT_MS);

  it('refuses to start on a bad configuration, naming the variable', async () => {
    const srv = startServer({ PORT: 'eighty', DATABASE_PATH: path.join(tmp, 'never.db') });
    expect(await srv.exited).toBe(1);
    expect(srv.err()).toMatch(/PORT: must be an integer from 0 to 65535 \(got "eighty"\)/);
    expect(fs.existsSync(path.join(tmp, 'never.db'))).toBe(false);
  }, E2E_TIMEOUT_MS);

  it('refuses to start on a database newer than the code', async () => {
    const file = path.join(tmp, 'newer.db');
    const raw = new Database(file);
    raw.pragma('user_version = 42');
    raw.close();
    const srv = startServer({ PORT: String(await freePort()), DATABASE_PATH: file });
    expect(await srv.exited).toBe(1);
    expect(srv.out()).toMatch(/schema is at version 42, newer than this server knows/);
  }, E2E_TIMEOUT_MS);
});
